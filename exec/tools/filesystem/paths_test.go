package filesystem_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/filesystem"
)

// escapes builds a working directory next to a directory outside it, with
// symlinks leading out, and returns both.
func escapes(t *testing.T) (work, outside string) {
	root := t.TempDir()
	work = filepath.Join(root, "work")
	outside = filepath.Join(root, "outside")
	for _, d := range []string{work, outside, filepath.Join(work, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644))
	must(os.MkdirAll(filepath.Join(outside, "empty"), 0o755))
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(work, "link.txt")))
	must(os.Symlink(outside, filepath.Join(work, "linkdir")))
	must(os.Symlink("../../outside", filepath.Join(work, "sub", "rel")))
	must(os.Symlink(filepath.Join(outside, "new.txt"), filepath.Join(work, "dangling.txt")))
	return work, outside
}

func TestPathEscapesAreRefused(t *testing.T) {
	work, outside := escapes(t)
	tools := toolset(t, filesystem.Options{WorkingDir: work})
	paths := []struct {
		name, path string
	}{
		{"dot-dot", "../outside/secret.txt"},
		{"absolute", filepath.Join(outside, "secret.txt")},
		{"symlink to a file outside", "link.txt"},
		{"symlinked parent", "linkdir/secret.txt"},
		{"relative symlinked parent", "sub/rel/secret.txt"},
		{"new file under a symlinked dir", "linkdir/new.txt"},
		{"new file deep under a symlinked dir", "linkdir/a/b/new.txt"},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			for _, tc := range []struct {
				tool string
				args map[string]any
			}{
				{"read_file", map[string]any{"path": p.path}},
				{"read_multiple_files", map[string]any{"paths": []string{p.path}}},
				{"write_file", map[string]any{"path": p.path, "content": "pwned"}},
				{"edit_file", map[string]any{"path": p.path, "edits": []map[string]string{{"oldText": "secret", "newText": "pwned"}}}},
				{"create_directory", map[string]any{"paths": []string{p.path + "/d"}}},
				{"list_directory", map[string]any{"path": filepath.Dir(p.path)}},
				{"search_files_content", map[string]any{"path": filepath.Dir(p.path), "query": "secret"}},
				{"directory_tree", map[string]any{"path": filepath.Dir(p.path)}},
			} {
				if tc.tool == "list_directory" || tc.tool == "search_files_content" || tc.tool == "directory_tree" {
					if d := filepath.Dir(p.path); d == "." || d == "sub" {
						continue // the parent is inside
					}
				}
				reads := map[string]bool{filesystem.ReadFile: true, filesystem.ReadMultipleFiles: true, filesystem.ListDirectory: true, filesystem.DirectoryTree: true, filesystem.SearchFilesContent: true}
				if a, ok := tools[tc.tool].(exec.Acting); ok && !reads[tc.tool] {
					// The reads ask only for a hidden path; the call
					// itself refuses one outside.
					raw, _ := json.Marshal(tc.args)
					_, _, err := a.Approval(context.Background(), exec.ToolCall{ID: "x", Arguments: raw})
					if err == nil || !strings.Contains(err.Error(), "outside the working directory") {
						t.Errorf("%s Approval: err = %v, want outside the working directory", tc.tool, err)
					}
				}
				res := call(t, tools[tc.tool], tc.args)
				if !strings.Contains(res.Text, "outside the working directory") || strings.Contains(res.Text, "secret\n") {
					t.Errorf("%s(%v) = %q (error %v), want a refusal", tc.tool, tc.args, res.Text, res.IsError)
				}
				if !res.IsError && tc.tool != "read_multiple_files" {
					t.Errorf("%s: not an error result", tc.tool)
				}
			}
			if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "secret\n" {
				t.Fatalf("outside file changed: %q", got)
			}
			ents, _ := os.ReadDir(outside)
			if len(ents) != 2 {
				t.Fatalf("outside now holds %d entries", len(ents))
			}
		})
	}
	res := call(t, tools["remove_directory"], map[string]any{"paths": []string{"linkdir/empty"}})
	if !res.IsError || !strings.Contains(res.Text, "outside the working directory") {
		t.Errorf("remove_directory through a symlink: %q", res.Text)
	}
	if _, err := os.Stat(filepath.Join(outside, "empty")); err != nil {
		t.Errorf("outside/empty removed: %v", err)
	}
}

func TestDanglingSymlinkIsNotFollowed(t *testing.T) {
	work, outside := escapes(t)
	tools := toolset(t, filesystem.Options{WorkingDir: work})
	if res := call(t, tools["read_file"], map[string]any{"path": "dangling.txt"}); !res.IsError {
		t.Errorf("read_file of a dangling link: %q", res.Text)
	}
	res := call(t, tools["write_file"], map[string]any{"path": "dangling.txt", "content": "inside\n"})
	if !res.IsError || !strings.Contains(res.Text, "dangling.txt is a symlink") {
		t.Errorf("write_file: %q", res.Text)
	}
	if _, err := os.Lstat(filepath.Join(outside, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the write went through the link: %v", err)
	}
}

func TestSymlinksInsideAreFollowed(t *testing.T) {
	dir := tree(t, map[string]string{"real/a.txt": "A\n"})
	if err := os.Symlink("real", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	if res := call(t, tools["read_file"], map[string]any{"path": "alias/a.txt"}); res.Text != "A\n" {
		t.Fatalf("read_file = %q", res.Text)
	}
	a, _, err := approval(t, tools["write_file"], map[string]any{"path": "alias/a.txt", "content": "B\n"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Args["path"] != "real/a.txt" {
		t.Errorf("rules see %v, want where the write lands: real/a.txt", a.Args["path"])
	}
	call(t, tools["write_file"], map[string]any{"path": "alias/a.txt", "content": "B\n"})
	if got := readFile(t, filepath.Join(dir, "real", "a.txt")); got != "B\n" {
		t.Errorf("real/a.txt = %q", got)
	}
}

func TestAllowedDirs(t *testing.T) {
	work := t.TempDir()
	extra := tree(t, map[string]string{"shared.txt": "shared\n"})
	tools := toolset(t, filesystem.Options{WorkingDir: work, AllowedDirs: []string{extra}})
	p := filepath.Join(extra, "shared.txt")
	if res := call(t, tools["read_file"], map[string]any{"path": p}); res.Text != "shared\n" {
		t.Fatalf("read_file = %q", res.Text)
	}
	a, _, err := approval(t, tools["write_file"], map[string]any{"path": p, "content": "x"})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(p)
	if a.Args["path"] != filepath.ToSlash(real) {
		t.Errorf("Args = %v, want the absolute path", a.Args)
	}
	if res := call(t, tools["read_file"], map[string]any{"path": filepath.Join(filepath.Dir(extra), "x")}); !strings.Contains(res.Text, "and in "+extra) {
		t.Errorf("refusal does not name the listed directory: %q", res.Text)
	}
}
