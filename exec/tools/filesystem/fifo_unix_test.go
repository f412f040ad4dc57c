//go:build unix

package filesystem_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/filesystem"
)

func TestFIFODoesNotHang(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip("no FIFOs:", err)
	}
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	done := make(chan exec.Result, 3)
	go func() {
		done <- call(t, tools["read_file"], map[string]any{"path": "pipe"})
		done <- call(t, tools["search_files_content"], map[string]any{"path": ".", "query": "x"})
	}()
	go func() {
		_, _, err := approval(t, tools["write_file"], map[string]any{"path": "pipe", "content": "x"})
		done <- exec.Result{Text: fmt.Sprint(err), IsError: err != nil}
	}()
	for i := 0; i < 3; i++ {
		select {
		case r := <-done:
			if r.Text != "No results found" && (!r.IsError || !strings.Contains(r.Text, "not a regular file")) {
				t.Errorf("got %q", r.Text)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a FIFO blocked the tool")
		}
	}
}
