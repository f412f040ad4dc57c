package filesystem_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec/tools/filesystem"
)

// A path hidden from what runs unasked (a credential store, a deny_read
// path), named by any of its names, makes every call that reads or changes
// it asked, whatever the tool; listings name it
// as the sandbox does, and trees and searches from outside it leave it out.
func TestHiddenPathsAreAsked(t *testing.T) {
	dir := tree(t, map[string]string{
		"secrets/key":    "TOP SECRET\n",
		"secrets/sub/x":  "TOP SECRET\n",
		"notes.txt":      "nothing TOP SECRET here\n",
		"home/.ssh/id":   "TOP SECRET\n",
		"docs/a.md":      "a\n",
		"secrets/empty/": "",
		"secrets/full/f": "",
		"empty/":         "",
	})
	// A link into a hidden path, and a hidden path named through a link.
	if err := os.Symlink("secrets/key", filepath.Join(dir, "key-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("home", filepath.Join(dir, "homelink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", filepath.Join(dir, "secrets", "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../notes.txt", filepath.Join(dir, "secrets", "out-link")); err != nil {
		t.Fatal(err)
	}
	tools := toolset(t, filesystem.Options{WorkingDir: dir, Hidden: []filesystem.Hidden{
		{Path: filepath.Join(dir, "secrets"), By: "permissions.deny_read"},
		{Path: filepath.Join(dir, "homelink", ".ssh"), By: "the credential stores"},
	}})
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		asked string // what Approval.Hidden says in part; "" not asked
	}{
		{"read a hidden file", "read_file", map[string]any{"path": "secrets/key"}, "secrets/key, in " + filepath.Join(dir, "secrets") + " (permissions.deny_read)"},
		{"read it by another name", "read_file", map[string]any{"path": "./docs/../secrets/key"}, "(permissions.deny_read)"},
		{"read it through a link", "read_file", map[string]any{"path": "key-link"}, "key-link, in"},
		{"read a hidden path named through a link", "read_file", map[string]any{"path": "home/.ssh/id"}, "(the credential stores)"},
		{"read a file beside", "read_file", map[string]any{"path": "notes.txt"}, ""},
		{"read many, one hidden", "read_multiple_files", map[string]any{"paths": []string{"notes.txt", "secrets/sub/x"}}, "secrets/sub/x"},
		{"list the hidden directory", "list_directory", map[string]any{"path": "secrets"}, "secrets, in"},
		{"list what holds it", "list_directory", map[string]any{"path": "."}, ""},
		{"tree from inside", "directory_tree", map[string]any{"path": "secrets/sub"}, "secrets/sub, in"},
		{"tree from outside", "directory_tree", map[string]any{"path": ""}, ""},
		{"search from inside", "search_files_content", map[string]any{"path": "secrets", "query": "SECRET"}, "secrets, in"},
		{"search from outside", "search_files_content", map[string]any{"path": ".", "query": "SECRET"}, ""},
		{"write a new file in it", "write_file", map[string]any{"path": "secrets/new", "content": "x"}, "secrets/new, in"},
		{"edit a hidden file", "edit_file", map[string]any{"path": "secrets/key", "edits": []map[string]any{{"oldText": "TOP", "newText": "x"}}}, "secrets/key, in"},
		{"edit a file beside", "edit_file", map[string]any{"path": "notes.txt", "edits": []map[string]any{{"oldText": "nothing", "newText": "x"}}}, ""},
		{"make a directory in it", "create_directory", map[string]any{"paths": []string{"docs/new", "secrets/new"}}, "secrets/new, in"},
		{"remove an empty directory in it", "remove_directory", map[string]any{"paths": []string{"secrets/empty"}}, "secrets/empty, in"},
		{"remove a directory beside", "remove_directory", map[string]any{"paths": []string{"empty"}}, ""},
		// A key of the wrong type beside the path does not turn the check
		// off, nor does a key in another case (json.Unmarshal takes it).
		{"read with a paths of the wrong type", "read_file", map[string]any{"path": "secrets/key", "paths": 1}, "secrets/key, in"},
		{"read many with a path of the wrong type", "read_multiple_files", map[string]any{"paths": []string{"secrets/key"}, "path": 5}, "secrets/key, in"},
		{"write with a paths of the wrong type", "write_file", map[string]any{"path": "secrets/key", "content": "x", "paths": 1}, "secrets/key, in"},
		{"read with the key in capitals", "read_file", map[string]any{"PATH": "secrets/key"}, "secrets/key, in"},
		{"read a symlink loop in it", "read_file", map[string]any{"path": "secrets/loop"}, "secrets/loop, in"},
		{"read a link in it that leads out", "read_file", map[string]any{"path": "secrets/out-link"}, "secrets/out-link, in"},
		// What would fail, by what the hidden path holds, is asked first:
		// the error tells nothing to the model unapproved.
		{"an edit whose text is not there", "edit_file", map[string]any{"path": "secrets/key", "edits": []map[string]any{{"oldText": "KEY-1", "newText": "x"}, {"oldText": "nowhere", "newText": ""}}}, "secrets/key, in"},
		{"an edit of a file not there", "edit_file", map[string]any{"path": "secrets/nothere", "edits": []map[string]any{{"oldText": "a", "newText": "b"}}}, "secrets/nothere, in"},
		{"remove a directory in it that is not empty", "remove_directory", map[string]any{"paths": []string{"secrets/full"}}, "secrets/full, in"},
		{"make a directory where a file is", "create_directory", map[string]any{"paths": []string{"secrets/key"}}, "secrets/key, in"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ap, acting, err := approval(t, tools[tc.tool], tc.args)
			if err != nil {
				t.Fatalf("Approval: %v", err)
			}
			if tc.asked == "" {
				if ap.Hidden != "" {
					t.Errorf("Hidden = %q, want none", ap.Hidden)
				}
				return
			}
			if !acting || !strings.Contains(ap.Hidden, tc.asked) {
				t.Errorf("asked %v, Hidden = %q, want it to say %q", acting, ap.Hidden, tc.asked)
			}
			// The question is kept (the journal, events): it shows only
			// what the model sent, nothing of what the path holds.
			for _, told := range []string{"SECRET", "failed", "holds", "not a directory", "not found"} {
				if strings.Contains(ap.Show, told) {
					t.Errorf("Show tells %q: %q", told, ap.Show)
				}
			}

		})
	}
	// Once asked and approved, a read of the hidden path reads it; a walk
	// from outside leaves out all the hidden paths hold, and says so.
	if res := call(t, tools["read_file"], map[string]any{"path": "secrets/key"}); res.Text != "TOP SECRET\n" {
		t.Errorf("read_file = %q", res.Text)
	}
	if res := call(t, tools["search_files_content"], map[string]any{"path": "secrets", "query": "SECRET"}); !strings.Contains(res.Text, "(2 matches in 2 files)") {
		t.Errorf("search from inside = %q", res.Text)
	}
	res := call(t, tools["search_files_content"], map[string]any{"path": ".", "query": "SECRET"})
	if strings.Contains(res.Text, "secrets/") || strings.Contains(res.Text, ".ssh") || !strings.Contains(res.Text, "notes.txt:1:") || !strings.Contains(res.Text, "2 paths hidden from what runs unasked") {
		t.Errorf("search from outside = %q", res.Text)
	}
	res = call(t, tools["directory_tree"], map[string]any{"path": ""})
	if strings.Contains(res.Text, `"key"`) || strings.Contains(res.Text, `"id"`) || strings.Contains(res.Text, `"secrets"`) || !strings.Contains(res.Text, `"notes.txt"`) || !strings.Contains(res.Text, "2 paths hidden from what runs unasked") {
		t.Errorf("tree from outside = %q", res.Text)
	}
	// A listing names what a hidden directory holds only when asked for
	// it; the names beside it, as the sandbox shows them, are listed.
	if res := call(t, tools["list_directory"], map[string]any{"path": "."}); !strings.Contains(res.Text, "DIR  secrets") {
		t.Errorf("list_directory = %q", res.Text)
	}
}
