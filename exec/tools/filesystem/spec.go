package filesystem

import (
	"encoding/json"
	"fmt"

	"github.com/hitl-dev/hitl/exec"
)

// descriptionParam is the optional "description" argument cagent adds to
// some of its tools (a note of what the call is for); it is accepted and
// unused.
const descriptionParam = `"description":{"type":"string","description":"A brief, human-readable description of what this tool call is doing"}`

func object(required []string, props ...string) json.RawMessage {
	s := `{"type":"object","properties":{`
	for i, p := range props {
		if i > 0 {
			s += ","
		}
		s += p
	}
	s += `}`
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		s += `,"required":` + string(r)
	}
	return json.RawMessage(s + `}`)
}

func str(name, desc string) string {
	d, _ := json.Marshal(desc)
	return fmt.Sprintf(`%q:{"type":"string","description":%s}`, name, d)
}

func strArray(name, desc string) string {
	d, _ := json.Marshal(desc)
	return fmt.Sprintf(`%q:{"type":"array","items":{"type":"string"},"description":%s}`, name, d)
}

func boolean(name, desc string) string {
	d, _ := json.Marshal(desc)
	return fmt.Sprintf(`%q:{"type":"boolean","description":%s}`, name, d)
}

const approvalNote = " A person may have to approve the change; a refusal comes back as an error result."

func spec(name string) exec.ToolSpec {
	s := exec.ToolSpec{Name: name}
	switch name {
	case ReadFile:
		s.Description = fmt.Sprintf("Read the complete contents of a file from the file system. Files longer than %s are cut; binary files are not shown.", sizeText(MaxFileSize))
		s.Parameters = object([]string{"path"}, str("path", "The file path to read"))
	case ReadMultipleFiles:
		s.Description = "Read the contents of multiple files simultaneously."
		s.Parameters = object([]string{"paths"},
			strArray("paths", "Array of file paths to read"),
			boolean("json", "Whether to return the result as JSON"))
	case ListDirectory:
		s.Description = "Get a detailed listing of all files and directories in a specified path."
		s.Parameters = object([]string{"path"}, str("path", "The directory path to list"), descriptionParam)
	case DirectoryTree:
		s.Description = fmt.Sprintf("Get a recursive tree view of files and directories as a JSON structure (at most %d entries).", MaxTreeEntries)
		s.Parameters = object([]string{"path"}, str("path", "The directory path to traverse (relative to working directory)"))
	case SearchFilesContent:
		s.Description = fmt.Sprintf("Searches for text or regex patterns in the content of files matching a GLOB pattern (at most %d matches; binary files and files over %s are skipped).", MaxMatches, sizeText(MaxFileSize))
		s.Parameters = object([]string{"path", "query"},
			str("path", "The starting directory path"),
			str("query", "The text or regex pattern to search for"),
			boolean("is_regex", "If true, treat query as regex; otherwise literal text"),
			strArray("excludePatterns", "Patterns to exclude from search"),
			descriptionParam)
	case WriteFile:
		s.Description = "Create a new file or completely overwrite an existing file with new content." + approvalNote
		s.Parameters = object([]string{"path", "content"},
			str("path", "The file path to write"),
			str("content", "The content to write to the file"),
			descriptionParam)
	case EditFile:
		s.Description = "Make line-based edits to a text file. Each edit replaces exact line sequences with new content." + approvalNote
		s.Parameters = object([]string{"path", "edits"},
			str("path", "The file path to edit"),
			`"edits":{"type":"array","description":"Array of edit operations","items":{"type":"object","properties":{`+
				str("oldText", "The exact text to replace")+","+str("newText", "The replacement text")+
				`},"required":["oldText","newText"]}}`,
			descriptionParam)
	case CreateDirectory:
		s.Description = "Create one or more new directories or nested directory structures." + approvalNote
		s.Parameters = object([]string{"paths"}, strArray("paths", "Array of directory paths to create"))
	case RemoveDirectory:
		s.Description = "Remove one or more empty directories." + approvalNote
		s.Parameters = object([]string{"paths"}, strArray("paths", "Array of directory paths to remove"))
	}
	return s
}
