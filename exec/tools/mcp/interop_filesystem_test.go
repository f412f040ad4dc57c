// Interoperation with the reference filesystem server
// (@modelcontextprotocol/server-filesystem): its roots, its paths.

package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// filesystem starts server-filesystem given args as its directories and
// roots as hitl's roots.
func filesystem(t *testing.T, args, roots []string) *Client {
	t.Helper()
	node, dir := interopNode(t)
	c := start(t, Server{
		Name:    "files",
		Command: node,
		Args:    append([]string{npmBin(t, dir, npmFilesystem)}, args...),
		Timeout: time.Minute,
	}, Options{Roots: roots})
	// The server replaces its directories with the client's roots when
	// it hears them, just after the handshake: wait for that.
	want := roots
	if want == nil {
		want = args
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res := mustCall(t, c, "list_allowed_directories", `{}`)
		if allowed(res.Text, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("allowed directories never became %v:\n%s", want, res.Text)
		}
	}
	return c
}

func allowed(text string, dirs []string) bool {
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			real = d
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(real) + `$`).MatchString(text) {
			return false
		}
	}
	return true
}

func TestInteropFilesystem(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("first line\nsecond line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("not for the server"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := filesystem(t, []string{root}, []string{root})
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }

	t.Run("approval follows readOnlyHint", func(t *testing.T) {
		for _, tc := range []struct {
			tool string
			args any
			asks bool
		}{
			{"list_directory", map[string]any{"path": root}, false},
			{"read_text_file", map[string]any{"path": filepath.Join(root, "notes.txt")}, false},
			{"read_file", map[string]any{"path": filepath.Join(root, "notes.txt")}, false},
			{"directory_tree", map[string]any{"path": root}, false},
			{"search_files", map[string]any{"path": root, "pattern": "*.txt"}, false},
			{"get_file_info", map[string]any{"path": root}, false},
			{"write_file", map[string]any{"path": filepath.Join(root, "x"), "content": "x"}, true},
			{"edit_file", map[string]any{"path": filepath.Join(root, "x"), "edits": []any{}}, true},
			{"create_directory", map[string]any{"path": filepath.Join(root, "d")}, true},
			{"move_file", map[string]any{"source": filepath.Join(root, "x"), "destination": filepath.Join(root, "y")}, true},
		} {
			a, asks := approval(t, c, tc.tool, js(tc.args))
			if asks != tc.asks {
				t.Errorf("%s: asks = %v, want %v", tc.tool, asks, tc.asks)
			}
			if asks && !strings.Contains(a.Show, "MCP tool "+tc.tool+" of server files") {
				t.Errorf("%s: shows %q", tc.tool, a.Show)
			}
		}
	})

	t.Run("read inside the root", func(t *testing.T) {
		wantText(t, mustCall(t, c, "list_directory", js(map[string]any{"path": root})), false, "[FILE] notes.txt")
		wantText(t, mustCall(t, c, "read_text_file", js(map[string]any{"path": filepath.Join(root, "notes.txt")})), false, "first line\nsecond line")
		wantText(t, mustCall(t, c, "read_text_file", js(map[string]any{"path": filepath.Join(root, "notes.txt"), "head": 1})), false, "first line")
	})

	t.Run("write inside the root", func(t *testing.T) {
		p := filepath.Join(root, "new.txt")
		a, asks := approval(t, c, "write_file", js(map[string]any{"path": p, "content": "written by hitl"}))
		if !asks || a.Args["path"] != p || a.Args["content"] != "written by hitl" {
			t.Fatalf("write_file approval: asks %v, %+v", asks, a)
		}
		wantText(t, mustCall(t, c, "write_file", js(map[string]any{"path": p, "content": "written by hitl"})), false, "Successfully wrote")
		if b, err := os.ReadFile(p); err != nil || string(b) != "written by hitl" {
			t.Errorf("new.txt: %q, %v", b, err)
		}
	})

	t.Run("outside the root refused by the server", func(t *testing.T) {
		secret := filepath.Join(outside, "secret.txt")
		for _, tc := range []struct{ tool, args string }{
			{"read_text_file", js(map[string]any{"path": secret})},
			{"read_text_file", js(map[string]any{"path": filepath.Join(root, "..", filepath.Base(outside), "secret.txt")})},
			{"list_directory", js(map[string]any{"path": outside})},
			{"write_file", js(map[string]any{"path": filepath.Join(outside, "planted.txt"), "content": "x"})},
		} {
			res := mustCall(t, c, tc.tool, tc.args)
			wantText(t, res, true, "Access denied")
			if strings.Contains(res.Text, "not for the server") {
				t.Errorf("%s %s read outside its root: %s", tc.tool, tc.args, res.Text)
			}
		}
		if _, err := os.Stat(filepath.Join(outside, "planted.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("write_file wrote outside the root: %v", err)
		}
	})

	t.Run("a symlink out of the root refused", func(t *testing.T) {
		link := filepath.Join(root, "escape")
		if err := os.Symlink(outside, link); err != nil {
			t.Skip(err)
		}
		res := mustCall(t, c, "read_text_file", js(map[string]any{"path": filepath.Join(link, "secret.txt")}))
		wantText(t, res, true)
		if strings.Contains(res.Text, "not for the server") {
			t.Errorf("read through a symlink out of the root: %s", res.Text)
		}
	})

	t.Run("unknown tool and missing file", func(t *testing.T) {
		res := mustCall(t, c, "read_text_file", js(map[string]any{"path": filepath.Join(root, "absent.txt")}))
		wantText(t, res, true, "ENOENT")
		res = mustCall(t, c, "read_text_file", `{}`)
		if !res.IsError {
			t.Errorf("read_text_file without a path: %+v", res)
		}
	})
}

// TestInteropFilesystemRootsReplaceArgs pins how server-filesystem treats
// hitl's roots: they replace the directories on its command line. An agent
// file's `args: [dir]` therefore confines the server to hitl's roots (the
// working directory by default), not to dir.
func TestInteropFilesystemRootsReplaceArgs(t *testing.T) {
	fromArgs, fromRoots := t.TempDir(), t.TempDir()
	for _, d := range []string{fromArgs, fromRoots} {
		if err := os.WriteFile(filepath.Join(d, "f.txt"), []byte("in "+filepath.Base(d)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := filesystem(t, []string{fromArgs}, []string{fromRoots})
	res := mustCall(t, c, "read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(fromRoots, "f.txt")))
	wantText(t, res, false, "in "+filepath.Base(fromRoots))
	res = mustCall(t, c, "read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(fromArgs, "f.txt")))
	wantText(t, res, true, "Access denied")
}
