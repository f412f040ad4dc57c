package filesystem_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec/tools/filesystem"
)

// treePaths flattens directory_tree's JSON into slash paths below the top.
func treePaths(t *testing.T, text string) map[string]bool {
	t.Helper()
	type node struct {
		Name     string  `json:"name"`
		Type     string  `json:"type"`
		Children []*node `json:"children"`
	}
	var top node
	if err := json.Unmarshal([]byte(text), &top); err != nil {
		t.Fatalf("directory_tree is not JSON: %v\n%s", err, text)
	}
	paths := map[string]bool{}
	var walk func(prefix string, n *node)
	walk = func(prefix string, n *node) {
		for _, c := range n.Children {
			p := prefix + c.Name
			paths[p] = true
			walk(p+"/", c)
		}
	}
	walk("", &top)
	return paths
}

func TestIgnoreVCS(t *testing.T) {
	files := map[string]string{
		".git/config":         "needle",
		".gitignore":          "*.log\n/build/\n!keep.log\ncache/\n# comment\nsecret?.txt\ndocs/**/gen.md\n",
		"a.go":                "needle",
		"x.log":               "needle",
		"keep.log":            "needle",
		"build/out.go":        "needle",
		"sub/build/kept.go":   "needle", // /build/ is anchored
		"sub/cache/c.go":      "needle",
		"sub/.gitignore":      "local.txt\n",
		"sub/local.txt":       "needle",
		"local.txt":           "needle", // the nested rule applies only in sub
		"secret1.txt":         "needle",
		"docs/a/b/gen.md":     "needle",
		"docs/gen.md":         "needle", // ** matches no directory too
		"docs/a/other.md":     "needle",
		"sub/deeper/x.log":    "needle",
		"sub/deeper/keep.log": "needle",
	}
	visible := []string{".gitignore", "a.go", "keep.log", "sub/build/kept.go", "sub/.gitignore", "local.txt", "docs/a/other.md", "sub/deeper/keep.log"}
	hidden := []string{".git", "x.log", "build", "sub/cache", "sub/local.txt", "secret1.txt", "docs/a/b/gen.md", "docs/gen.md", "sub/deeper/x.log"}
	dir := tree(t, files)

	for _, ignore := range []bool{true, false} {
		t.Run(fmt.Sprint("ignore_vcs=", ignore), func(t *testing.T) {
			tools := toolset(t, filesystem.Options{WorkingDir: dir, IgnoreVCS: ignore})
			inTree := treePaths(t, call(t, tools["directory_tree"], map[string]any{"path": "."}).Text)
			search := "\n" + call(t, tools["search_files_content"], map[string]any{"path": ".", "query": "needle"}).Text
			list := call(t, tools["list_directory"], map[string]any{"path": "."}).Text
			for _, p := range visible {
				if !inTree[p] {
					t.Errorf("tree hides %s", p)
				}
				if !strings.HasSuffix(p, ".gitignore") && !strings.Contains(search, "\n"+p+":") {
					t.Errorf("search hides %s", p)
				}
			}
			for _, p := range hidden {
				inSearch := strings.Contains(search, "\n"+p+"/") || strings.Contains(search, "\n"+p+":")
				if ignore == inTree[p] || ignore == inSearch {
					t.Errorf("%s: in tree %v, in search %v", p, inTree[p], inSearch)
				}
			}
			if ignore == strings.Contains(list, "DIR  .git\n") || ignore == strings.Contains(list, "FILE x.log\n") {
				t.Errorf("list_directory:\n%s", list)
			}
			if ignore != strings.Contains(list, "(4 entries hidden by ignore_vcs)") {
				t.Errorf("list_directory does not say entries were hidden:\n%s", list)
			}
			sub := call(t, tools["list_directory"], map[string]any{"path": "sub"}).Text
			if ignore == strings.Contains(sub, "local.txt") {
				t.Errorf("list_directory sub:\n%s", sub)
			}
			inBuild := call(t, tools["list_directory"], map[string]any{"path": "build"}).Text
			if ignore != strings.Contains(inBuild, "hidden by ignore_vcs") {
				t.Errorf("list_directory of an ignored directory:\n%s", inBuild)
			}
			// Reading a named file is never hidden.
			if res := call(t, tools["read_file"], map[string]any{"path": "x.log"}); res.Text != "needle" {
				t.Errorf("read_file x.log = %q", res.Text)
			}
		})
	}
}

func TestIgnoreVCSFromASubdirectoryOfTheRepository(t *testing.T) {
	dir := tree(t, map[string]string{
		".git/HEAD":     "ref",
		".gitignore":    "*.tmp\n",
		"proj/a.txt":    "needle",
		"proj/b.tmp":    "needle",
		"proj/.git_not": "needle",
	})
	tools := toolset(t, filesystem.Options{WorkingDir: filepath.Join(dir, "proj"), IgnoreVCS: true})
	got := call(t, tools["search_files_content"], map[string]any{"path": ".", "query": "needle"}).Text
	if strings.Contains(got, "b.tmp") || !strings.Contains(got, "a.txt") {
		t.Errorf("the repository's .gitignore above the working directory was not applied:\n%s", got)
	}
}
