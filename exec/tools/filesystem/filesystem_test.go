package filesystem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/filesystem"
)

// tree makes files (path → content; a path ending in / is a directory)
// under a new directory and returns it.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func toolset(t testing.TB, o filesystem.Options) map[string]exec.Tool {
	t.Helper()
	ts := filesystem.New(o)
	t.Cleanup(func() { ts.Close() })
	m := map[string]exec.Tool{}
	for _, tl := range ts.Tools() {
		m[tl.Spec().Name] = tl
	}
	return m
}

func call(t testing.TB, tl exec.Tool, args any) exec.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Call(context.Background(), exec.ToolCall{ID: "c1", Name: tl.Spec().Name, Arguments: raw})
	if err != nil {
		t.Fatalf("%s(%s): %v", tl.Spec().Name, raw, err)
	}
	return res
}

func approval(t testing.TB, tl exec.Tool, args any) (exec.Approval, bool, error) {
	t.Helper()
	a, ok := tl.(exec.Acting)
	if !ok {
		t.Fatalf("%s is not exec.Acting", tl.Spec().Name)
	}
	raw, _ := json.Marshal(args)
	return a.Approval(context.Background(), exec.ToolCall{ID: "c1", Name: tl.Spec().Name, Arguments: raw})
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSpecsAreCagents(t *testing.T) {
	tools := toolset(t, filesystem.Options{WorkingDir: t.TempDir()})
	want := map[string][]string{ // tool → required arguments, then optional ones after "|"
		"read_file":            {"path"},
		"read_multiple_files":  {"paths", "|", "json"},
		"list_directory":       {"path", "|", "description"},
		"directory_tree":       {"path"},
		"search_files_content": {"path", "query", "|", "is_regex", "excludePatterns", "description"},
		"write_file":           {"path", "content", "|", "description"},
		"edit_file":            {"path", "edits", "|", "description"},
		"create_directory":     {"paths"},
		"remove_directory":     {"paths"},
	}
	if len(tools) != len(want) {
		t.Fatalf("got %d tools, want %d", len(tools), len(want))
	}
	for name, args := range want {
		tl, ok := tools[name]
		if !ok {
			t.Errorf("no tool %s", name)
			continue
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tl.Spec().Parameters, &schema); err != nil {
			t.Fatalf("%s: schema: %v", name, err)
		}
		var req []string
		optional := false
		for _, a := range args {
			if a == "|" {
				optional = true
				continue
			}
			if _, ok := schema.Properties[a]; !ok {
				t.Errorf("%s: no argument %s", name, a)
			}
			if !optional {
				req = append(req, a)
			}
		}
		if fmt.Sprint(schema.Required) != fmt.Sprint(req) {
			t.Errorf("%s: required %v, want %v", name, schema.Required, req)
		}
		if len(schema.Properties) != len(args)-boolToInt(optional) {
			t.Errorf("%s: %d properties, want %v", name, len(schema.Properties), args)
		}
	}
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestReadToolsResultShape(t *testing.T) {
	dir := tree(t, map[string]string{
		"a.txt":       "alpha\nbeta\n",
		"docs/b.md":   "# B\nbeta gamma\n",
		"docs/c.md":   "nothing\n",
		"empty/":      "",
		"bin.dat":     "x\x00y",
		"vendor/v.go": "beta\n",
	})
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	tests := []struct {
		tool    string
		args    any
		want    string
		isError bool
	}{
		{"read_file", map[string]any{"path": "a.txt"}, "alpha\nbeta\n", false},
		{"read_file", map[string]any{"path": "missing.txt"}, "not found", true},
		{"read_file", map[string]any{"path": "docs"}, "docs is a directory: use list_directory or directory_tree", true},
		{"read_file", map[string]any{"path": "bin.dat"}, "(binary file, 3 bytes, not shown)", false},
		{"read_file", map[string]any{"path": filepath.Join(dir, "a.txt")}, "alpha\nbeta\n", false},
		{"read_multiple_files", map[string]any{"paths": []string{"a.txt", "nope"}},
			"=== a.txt ===\nalpha\nbeta\n\n\n=== nope ===\nnot found\n\n", false},
		{"read_multiple_files", map[string]any{"paths": []string{"docs/c.md"}, "json": true},
			`[{"path":"docs/c.md","content":"nothing\n"}]`, false},
		{"list_directory", map[string]any{"path": "."},
			"FILE a.txt\nFILE bin.dat\nDIR  docs\nDIR  empty\nDIR  vendor\n", false},
		{"list_directory", map[string]any{"path": "empty"}, "(empty directory)\n", false},
		{"list_directory", map[string]any{"path": "a.txt"}, "a.txt is not a directory", true},
		{"directory_tree", map[string]any{"path": "docs"},
			`{"name":"docs","type":"directory","children":[{"name":"b.md","type":"file"},{"name":"c.md","type":"file"}]}`, false},
		{"directory_tree", map[string]any{"path": "empty"}, `{"name":"empty","type":"directory"}`, false},
		{"search_files_content", map[string]any{"path": ".", "query": "beta"},
			"a.txt:2:1: beta\ndocs/b.md:2:1: beta gamma\nvendor/v.go:1:1: beta\n(3 matches in 3 files)", false},
		{"search_files_content", map[string]any{"path": ".", "query": "beta", "excludePatterns": []string{"vendor/*", "*.txt"}},
			"docs/b.md:2:1: beta gamma\n(1 matches in 1 files)", false},
		{"search_files_content", map[string]any{"path": "docs", "query": "g[a-z]+a", "is_regex": true},
			"docs/b.md:2:6: beta gamma\n(1 matches in 1 files)", false},
		{"search_files_content", map[string]any{"path": ".", "query": "zzz"}, "No results found", false},
		{"search_files_content", map[string]any{"path": ".", "query": "(", "is_regex": true},
			"Invalid regex pattern: error parsing regexp: missing closing ): `(`", true},
		{"search_files_content", map[string]any{"path": ".", "query": ""},
			"query is empty: give the text or regular expression to search for", true},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res := call(t, tools[tc.tool], tc.args)
			if res.Text != tc.want || res.IsError != tc.isError {
				t.Errorf("%s(%v) = %q (error %v), want %q (error %v)", tc.tool, tc.args, res.Text, res.IsError, tc.want, tc.isError)
			}
			// A read is asked only for a hidden path (Options.Hidden):
			// with none, it runs unasked.
			if _, asked, err := approval(t, tools[tc.tool], tc.args); asked || err != nil {
				t.Errorf("%s reads but asks (err %v)", tc.tool, err)
			}
		})
	}
}

func TestActingToolsResultShape(t *testing.T) {
	dir := tree(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "gone/": ""})
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	tests := []struct {
		tool    string
		args    any
		want    string
		isError bool
		file    string // checked afterwards: path → content
		content string
	}{
		{"write_file", map[string]any{"path": "new/b.txt", "content": "hello\n"},
			"File written successfully: new/b.txt (6 bytes)", false, "new/b.txt", "hello\n"},
		{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "two", "newText": "2"}}},
			"File edited successfully. Replaced 3 characters", false, "a.txt", "one\n2\nthree\n"},
		{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "one", "newText": "1"}, {"oldText": "three", "newText": "3"}}},
			"File edited successfully. Changes:\nEdit 1: Replaced 3 characters\nEdit 2: Replaced 5 characters", false, "a.txt", "1\n2\n3\n"},
		{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "absent", "newText": "x"}}},
			"Edit 1 failed: old text not found", true, "a.txt", "1\n2\n3\n"},
		{"edit_file", map[string]any{"path": "nope.txt", "edits": []map[string]string{{"oldText": "a", "newText": "b"}}},
			"Error reading file: nope.txt: not found", true, "", ""},
		{"create_directory", map[string]any{"paths": []string{"x/y", "z"}},
			"Directory created successfully: x/y\nDirectory created successfully: z", false, "", ""},
		{"remove_directory", map[string]any{"paths": []string{"gone"}},
			"Directory removed successfully: gone", false, "", ""},
		{"remove_directory", map[string]any{"paths": []string{"gone"}},
			"Error removing directory gone: no such file or directory", true, "", ""},
		{"remove_directory", map[string]any{"paths": []string{"."}},
			". is the working directory (or one the toolset lists): it cannot be removed", true, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res := call(t, tools[tc.tool], tc.args)
			if res.Text != tc.want || res.IsError != tc.isError {
				t.Errorf("%s(%v) = %q (error %v), want %q (error %v)", tc.tool, tc.args, res.Text, res.IsError, tc.want, tc.isError)
			}
			if tc.file != "" {
				if got := readFile(t, filepath.Join(dir, tc.file)); got != tc.content {
					t.Errorf("%s holds %q, want %q", tc.file, got, tc.content)
				}
			}
		})
	}
	for _, d := range []string{"x/y", "z"} {
		if st, err := os.Stat(filepath.Join(dir, d)); err != nil || !st.IsDir() {
			t.Errorf("create_directory did not make %s", d)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gone")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("remove_directory left gone: %v", err)
	}
}

func TestApprovalOfActingTools(t *testing.T) {
	dir := tree(t, map[string]string{"docs/a.md": "line 1\nline 2\nline 3\n", "full/f": "x", "empty/": ""})
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	tests := []struct {
		name    string
		tool    string
		args    any
		wantArg map[string]any
		show    []string // each must appear in Show
		session string
		err     string
	}{
		{"edit shows a diff", "edit_file", map[string]any{"path": "docs/a.md", "edits": []map[string]string{{"oldText": "line 2", "newText": "LINE TWO"}}},
			map[string]any{"path": "docs/a.md", "edits": []any{map[string]any{"oldText": "line 2", "newText": "LINE TWO"}}},
			[]string{"edit_file docs/a.md: 21 bytes → 23 bytes (+1 -1 lines)", "--- a/docs/a.md", "+++ b/docs/a.md", "@@ -1,3 +1,3 @@", " line 1", "-line 2", "+LINE TWO", " line 3"}, "", ""},
		{"write of a new file diffs against /dev/null", "write_file", map[string]any{"path": "./docs/../new/b.md", "content": "hi\n"},
			map[string]any{"path": "new/b.md", "content": "hi\n"},
			[]string{"write_file new/b.md: new file, 3 bytes", "creates the directory new", "--- /dev/null", "+++ b/new/b.md", "+hi"}, "", ""},
		{"write of the same content says so", "write_file", map[string]any{"path": "docs/a.md", "content": "line 1\nline 2\nline 3\n"},
			map[string]any{"path": "docs/a.md", "content": "line 1\nline 2\nline 3\n"}, []string{"no change: the file already holds this content"}, "", ""},
		{"create shows the paths", "create_directory", map[string]any{"paths": []string{"n1", "docs"}},
			map[string]any{"paths": []any{"n1", "docs"}}, []string{"create directories:", "n1 (new)", "docs (exists already)"}, "create_directory\x00n1\x00docs", ""},
		{"remove shows the path", "remove_directory", map[string]any{"paths": []string{"empty"}},
			map[string]any{"paths": []any{"empty"}}, []string{"remove empty directories:", "empty (empty)"}, "", ""},
		{"remove of a full directory is refused before asking", "remove_directory", map[string]any{"paths": []string{"full"}},
			nil, nil, "", "full is not empty (it holds f): remove_directory removes only empty directories"},
		{"edit whose text is missing is refused before asking", "edit_file", map[string]any{"path": "docs/a.md", "edits": []map[string]string{{"oldText": "zzz", "newText": "y"}}},
			nil, nil, "", "Edit 1 failed: old text not found"},
		{"bad arguments", "write_file", map[string]any{"path": 3}, nil, nil, "", "invalid arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ok, err := approval(t, tools[tc.tool], tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !ok {
				t.Fatalf("Approval: ok %v err %v; want it to need approval", ok, err)
			}
			if fmt.Sprint(a.Args) != fmt.Sprint(tc.wantArg) {
				t.Errorf("Args = %v, want %v", a.Args, tc.wantArg)
			}
			for _, s := range tc.show {
				if !strings.Contains(a.Show, s) {
					t.Errorf("Show lacks %q:\n%s", s, a.Show)
				}
			}
			if a.SessionKey != tc.session {
				t.Errorf("SessionKey = %q, want %q", a.SessionKey, tc.session)
			}
			if a.Server != "" {
				t.Errorf("Server = %q", a.Server)
			}
		})
	}
}

// TestApprovalShowIsRawAndWhole: Show is the whole diff, unescaped and
// not shortened: the front end escapes it and, on a terminal, shortens it
// keeping both ends (prompt/tty fit); escaping here too would double every
// backslash on the screen, and a JSONL consumer wants the full diff.
func TestApprovalShowIsRawAndWhole(t *testing.T) {
	dir := t.TempDir()
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	var lines []string
	for i := 1; i <= 500; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	lines[0] = "evil \x1b]0;pwned\x07 \u202egnp.exe"
	lines[1] = `a literal \n backslash`
	lines[499] = "rm -rf ~ # the decisive last line"
	lines[250] = strings.Repeat("w", 5000)
	a, _, err := approval(t, tools["write_file"], map[string]any{"path": "s.sh", "content": strings.Join(lines, "\n")})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+evil \x1b]0;pwned\x07 \u202egnp.exe\n", "+a literal \\n backslash\n", "+line 250\n", "+" + strings.Repeat("w", 5000) + "\n", "+rm -rf ~ # the decisive last line"} {
		if !strings.Contains(a.Show, want) {
			t.Errorf("Show lacks %.80q", want)
		}
	}
	if strings.Contains(a.Show, "left out") || strings.Contains(a.Show, `\\x1b`) {
		t.Errorf("Show was shortened or escaped by the tool:\n%.500s", a.Show)
	}
}

func TestChangeAfterApprovalIsRefused(t *testing.T) {
	dir := tree(t, map[string]string{"a.txt": "v1\n"})
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	args := map[string]any{"path": "a.txt", "content": "v3\n"}
	if _, _, err := approval(t, tools["write_file"], args); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := call(t, tools["write_file"], args)
	if !res.IsError || !strings.Contains(res.Text, "changed after its change was approved") {
		t.Fatalf("got %+v", res)
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "v2\n" {
		t.Fatalf("a.txt = %q", got)
	}
	// Unchanged since the approval: written.
	if _, _, err := approval(t, tools["write_file"], args); err != nil {
		t.Fatal(err)
	}
	if res := call(t, tools["write_file"], args); res.IsError {
		t.Fatalf("got %+v", res)
	}
}
