package sandbox

import (
	"fmt"
	"os"
	"sync"
)

// runTemp is the run's private temp dirs of the commands it runs unasked:
// one beneath base for each writable root.
type runTemp struct {
	mu    sync.Mutex
	base  string
	roots map[string]string
}

// TempDir is the run's private temp dir (the TMPDIR) of the commands it
// runs unasked that may write in root, made (0700) on first use and
// removed when the sandbox closes. Every toolset of the run with that root
// has the same one, so their commands share a sandbox of the run (DESIGN
// §15), which a run may start before it builds its toolsets; a toolset
// with another root has another, so that no command leads another's to
// write through a link it planted where it could not write itself.
func (s *Sandbox) TempDir(root string) (string, error) {
	if s == nil {
		return "", fmt.Errorf("sandbox: no sandbox, so no temp dir of its own")
	}
	s.temp.mu.Lock()
	defer s.temp.mu.Unlock()
	if d, ok := s.temp.roots[root]; ok {
		return d, nil
	}
	if s.temp.base == "" {
		d, err := os.MkdirTemp("", "hitl-cmd-")
		if err != nil {
			return "", fmt.Errorf("cannot make a temp dir for the command: %w", err)
		}
		s.temp.base, s.temp.roots = d, map[string]string{}
	}
	d, err := os.MkdirTemp(s.temp.base, "t")
	if err != nil {
		return "", fmt.Errorf("cannot make a temp dir for the command: %w", err)
	}
	s.temp.roots[root] = d
	return d, nil
}

// removeTempDir removes the temp dirs, once the commands are ended.
func (s *Sandbox) removeTempDir() {
	s.temp.mu.Lock()
	defer s.temp.mu.Unlock()
	if s.temp.base != "" {
		_ = os.RemoveAll(s.temp.base)
		s.temp.base, s.temp.roots = "", nil
	}
}
