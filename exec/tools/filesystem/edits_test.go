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
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/filesystem"
)

func TestPostEdit(t *testing.T) {
	dir := tree(t, map[string]string{"a.go": "package a\n", "b.txt": "b\n"})
	tools := toolset(t, filesystem.Options{
		WorkingDir: dir,
		PostEdit: []filesystem.PostEdit{
			{Path: "*.go", Cmd: `echo "formatted $path in $(pwd)"; echo SECRET-VALUE`},
			{Path: "*.txt", Cmd: "echo failing; exit 3"},
			{Path: "slow/*", Cmd: "sleep 30"},
		},
		PostEditTimeout: 300 * time.Millisecond,
		Secrets:         maskSecret{},
	})
	real, _ := filepath.EvalSymlinks(dir)
	res := call(t, tools["write_file"], map[string]any{"path": "a.go", "content": "package a // x\n"})
	want := fmt.Sprintf("File written successfully: a.go (15 bytes)\npost_edit ran `echo \"formatted $path in $(pwd)\"; echo ***` (exit 0):\nformatted %s in %s\n***", filepath.Join(real, "a.go"), real)
	if res.Text != want || res.IsError {
		t.Errorf("got  %q\nwant %q", res.Text, want)
	}
	res = call(t, tools["edit_file"], map[string]any{"path": "b.txt", "edits": []map[string]string{{"oldText": "b", "newText": "c"}}})
	if !res.IsError || !strings.Contains(res.Text, "post_edit ran `echo failing; exit 3` (exit status 3):\nfailing\nThe file was written; the post-edit command failed.") {
		t.Errorf("got %q", res.Text)
	}
	if got := readFile(t, filepath.Join(dir, "b.txt")); got != "c\n" {
		t.Errorf("b.txt = %q", got)
	}
	start := time.Now()
	res = call(t, tools["write_file"], map[string]any{"path": "slow/x", "content": ""})
	if !res.IsError || !strings.Contains(res.Text, "stopped after 300ms") || time.Since(start) > 10*time.Second {
		t.Errorf("got %q after %v", res.Text, time.Since(start))
	}
	res = call(t, tools["write_file"], map[string]any{"path": "c.md", "content": ""})
	if strings.Contains(res.Text, "post_edit") {
		t.Errorf("a post_edit ran for c.md: %q", res.Text)
	}
}

type maskSecret struct{}

func (maskSecret) Mask(s string) string { return strings.ReplaceAll(s, "SECRET-VALUE", "***") }

func TestSecretsAreMaskedInResults(t *testing.T) {
	dir := tree(t, map[string]string{"a.txt": "token=SECRET-VALUE\n"})
	tools := toolset(t, filesystem.Options{WorkingDir: dir, Secrets: maskSecret{}})
	for tool, args := range map[string]any{
		"read_file":            map[string]any{"path": "a.txt"},
		"read_multiple_files":  map[string]any{"paths": []string{"a.txt"}},
		"search_files_content": map[string]any{"path": ".", "query": "token"},
	} {
		if res := call(t, tools[tool], args); strings.Contains(res.Text, "SECRET-VALUE") || !strings.Contains(res.Text, "***") {
			t.Errorf("%s = %q", tool, res.Text)
		}
	}
}

func TestBounds(t *testing.T) {
	files := map[string]string{
		"big.txt":   strings.Repeat("needle ", filesystem.MaxFileSize/7+100),
		"huge.txt":  strings.Repeat("x", filesystem.MaxFileSize+1) + "needle",
		"binary.db": "needle\x00",
	}
	for i := 0; i < filesystem.MaxTreeEntries+10; i++ {
		files[fmt.Sprintf("many/f%04d.txt", i)] = "needle\n"
	}
	dir := tree(t, files)
	tools := toolset(t, filesystem.Options{WorkingDir: dir})

	res := call(t, tools["read_file"], map[string]any{"path": "big.txt"})
	if len(res.Text) > filesystem.MaxFileSize+200 || !strings.Contains(res.Text, "[cut: the file is") {
		t.Errorf("read_file of a big file: %d bytes, ends %q", len(res.Text), res.Text[len(res.Text)-80:])
	}
	res = call(t, tools["read_multiple_files"], map[string]any{"paths": []string{"big.txt", "many/f0001.txt"}})
	if len(res.Text) > filesystem.MaxFileSize+500 || !strings.Contains(res.Text, "(not read: this result reached its 1 MiB bound") {
		t.Errorf("read_multiple_files: %d bytes", len(res.Text))
	}
	res = call(t, tools["search_files_content"], map[string]any{"path": ".", "query": "needle"})
	if n := strings.Count(res.Text, "\n"); n > filesystem.MaxMatches+3 {
		t.Errorf("search gave %d lines", n)
	}
	for _, want := range []string{"stopped at 200 matches", "(2 files larger than 1 MiB not searched)"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("search result lacks %q: ...%s", want, res.Text[len(res.Text)-300:])
		}
	}
	if strings.Contains(res.Text, "binary.db") {
		t.Errorf("binary file searched")
	}
	if len(res.Text) > filesystem.MaxResult+1000 {
		t.Errorf("search result is %d bytes", len(res.Text))
	}
	res = call(t, tools["directory_tree"], map[string]any{"path": "."})
	if !strings.Contains(res.Text, "(tree cut at 1000 entries") {
		t.Errorf("tree not capped: ...%s", res.Text[max(0, len(res.Text)-200):])
	}
	js, _, _ := strings.Cut(res.Text, "\n(tree cut")
	if !json.Valid([]byte(js)) {
		t.Errorf("capped tree is not JSON: ...%s", js[max(0, len(js)-200):])
	}
	res = call(t, tools["list_directory"], map[string]any{"path": "many"})
	if n := strings.Count(res.Text, "FILE "); n != filesystem.MaxListEntries || !strings.Contains(res.Text, "output truncated") {
		t.Errorf("list_directory gave %d entries", n)
	}
}

func TestCancelledSearchStops(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 600; i++ {
		files[fmt.Sprintf("d%d/f.txt", i)] = "x"
	}
	dir := tree(t, files)
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range []string{"search_files_content", "directory_tree"} {
		_, err := tools[tool].Call(ctx, exec.ToolCall{Arguments: json.RawMessage(`{"path":".","query":"zz"}`)})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", tool, err)
		}
	}
}

func TestWriteReplacesHardLinksAndKeepsMode(t *testing.T) {
	dir := tree(t, map[string]string{"run.sh": "#!/bin/sh\n"})
	outside := filepath.Join(t.TempDir(), "linked")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "run.sh"), outside); err != nil {
		t.Skip("no hard links:", err)
	}
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	if res := call(t, tools["write_file"], map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}); res.IsError {
		t.Fatal(res.Text)
	}
	if got := readFile(t, outside); got != "#!/bin/sh\n" {
		t.Errorf("the write reached a hard link outside: %q", got)
	}
	if st, _ := os.Stat(filepath.Join(dir, "run.sh")); st.Mode().Perm() != 0o750 {
		t.Errorf("mode = %v", st.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func TestSymlinkRetargetedAfterApprovalIsRefused(t *testing.T) {
	dir := tree(t, map[string]string{"one/a.txt": "same\n", "two/a.txt": "same\n"})
	link := filepath.Join(dir, "cur")
	if err := os.Symlink("one", link); err != nil {
		t.Fatal(err)
	}
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	args := map[string]any{"path": "cur/a.txt", "content": "new\n"}
	a, _, err := approval(t, tools["write_file"], args)
	if err != nil || a.Args["path"] != "one/a.txt" {
		t.Fatalf("Approval: %v %v", a.Args, err)
	}
	os.Remove(link)
	if err := os.Symlink("two", link); err != nil {
		t.Fatal(err)
	}
	res := call(t, tools["write_file"], args)
	if !res.IsError || !strings.Contains(res.Text, "now leads to two/a.txt, not to one/a.txt") {
		t.Fatalf("got %+v", res)
	}
	if readFile(t, filepath.Join(dir, "two/a.txt")) != "same\n" {
		t.Fatal("two/a.txt written")
	}
}

// The reads say what permission rules judge of a call: each path as it
// really lands (as the writes' approvals name it), so a deny rule for
// .git/* is not passed by ./.git/config, x/../.git/config, an absolute
// path or a symlink to .git.
func TestReadRuleArgsResolvePaths(t *testing.T) {
	dir := tree(t, map[string]string{".git/config": "x", "a.txt": "a"})
	if err := os.Symlink(".git", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	type ruleArgser interface {
		RuleArgs(exec.ToolCall) map[string]any
	}
	tests := []struct {
		tool, args, want string
	}{
		{"read_file", `{"path":"./.git/config"}`, `{"path":".git/config"}`},
		{"read_file", `{"path":"nowhere/../.git//config"}`, `{"path":".git/config"}`},
		{"read_file", `{"path":"alias/config"}`, `{"path":".git/config"}`},
		{"read_file", `{"path":"` + real + `/.git/config"}`, `{"path":".git/config"}`},
		{"read_file", `{"path":"../outside"}`, `{"path":"../outside"}`}, // refused by the read
		{"read_multiple_files", `{"paths":["a.txt","./alias/config"],"json":true}`, `{"json":true,"paths":["a.txt",".git/config"]}`},
		{"list_directory", `{"path":""}`, `{"path":"."}`},
		{"directory_tree", `{"path":"alias"}`, `{"path":".git"}`},
		{"search_files_content", `{"path":"./alias/","query":"x"}`, `{"path":".git","query":"x"}`},
	}
	for _, tc := range tests {
		r, ok := tools[tc.tool].(ruleArgser)
		if !ok {
			t.Fatalf("%s does not say what rules judge", tc.tool)
		}
		got, _ := json.Marshal(r.RuleArgs(exec.ToolCall{Name: tc.tool, Arguments: json.RawMessage(tc.args)}))
		if string(got) != tc.want {
			t.Errorf("%s %s: rule args %s, want %s", tc.tool, tc.args, got, tc.want)
		}
	}
}
