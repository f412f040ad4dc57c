//go:build unix

package memory

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
)

// A FIFO planted where the memory file goes is refused, never read: the
// open would wait forever for a writer. The guard below only turns such a
// hang into a failure.
func TestPlantedFIFORefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "memory.json")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := New(Options{Path: p})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("error %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("New blocked on a FIFO")
	}
}

// A symlink planted as the lock file is not followed: nothing is created
// where it points.
func TestPlantedLockSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "memory.json")
	target := filepath.Join(dir, "elsewhere")
	if err := os.Symlink(target, p+".lock"); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	var add exec.Tool
	for _, tl := range s.Tools() {
		if tl.Spec().Name == "add_memory" {
			add = tl
		}
	}
	args, _ := json.Marshal(map[string]string{"memory": "x"})
	if _, err := add.Call(context.Background(), exec.ToolCall{Name: "add_memory", Arguments: args}); err == nil {
		t.Error("add_memory through a planted lock symlink: no error")
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("the lock symlink was followed: its target was created")
	}
}
