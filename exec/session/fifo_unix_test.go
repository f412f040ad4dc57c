//go:build unix

package session

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO where a session should be never hangs resume or the listing.
func TestFIFONeverHangs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if _, _, err := Open(path, testKey("0123456789abcdef")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open(FIFO) = %v, want refused", err)
	}
	list, err := List(dir)
	if err != nil || len(list) != 0 {
		t.Errorf("List = %v, %v; want the FIFO skipped", list, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
