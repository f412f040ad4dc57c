package sandbox

import (
	"fmt"
	"os"
	"sync"
)

// runTemp is the run's private temp dir of the commands it runs unasked.
type runTemp struct {
	mu   sync.Mutex
	path string
}

// TempDir is the run's private temp dir (the TMPDIR of the commands it
// runs unasked), made (0700) on first use and removed when the sandbox
// closes. Every toolset of the run has the same, so a command of each
// runs in the same sandbox of the run (DESIGN §15), which a run may start
// before it builds its toolsets.
func (s *Sandbox) TempDir() (string, error) {
	if s == nil {
		return "", fmt.Errorf("sandbox: no sandbox, so no temp dir of its own")
	}
	s.temp.mu.Lock()
	defer s.temp.mu.Unlock()
	if s.temp.path == "" {
		d, err := os.MkdirTemp("", "hitl-cmd-")
		if err != nil {
			return "", fmt.Errorf("cannot make a temp dir for the command: %w", err)
		}
		s.temp.path = d
	}
	return s.temp.path, nil
}

// removeTempDir removes the temp dir, once the commands are ended.
func (s *Sandbox) removeTempDir() {
	s.temp.mu.Lock()
	defer s.temp.mu.Unlock()
	if s.temp.path != "" {
		_ = os.RemoveAll(s.temp.path)
		s.temp.path = ""
	}
}
