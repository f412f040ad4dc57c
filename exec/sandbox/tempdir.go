package sandbox

import (
	"fmt"
	"os"
	"sync"
	"time"
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
		withTemps.Lock()
		withTemps.set[s] = true
		withTemps.Unlock()
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
		withTemps.Lock()
		delete(withTemps.set, s)
		withTemps.Unlock()
	}
}

// withTemps are the sandboxes that have temp dirs, for RemoveTempDirs. (Lock
// order: a sandbox's temp.mu, then this.)
var withTemps = struct {
	sync.Mutex
	set map[*Sandbox]bool
}{set: map[*Sandbox]bool{}}

// RemoveTempDirs is for a process that exits at once, without closing its
// sandboxes (a second Ctrl-C, after KillAll): the runs' temp dirs are
// removed, as Close would have, for at most bound (a command may have
// filled them with a million files: the exit does not wait for that, and
// what is not removed by then stays). A command killed in the middle of
// making a file there may still be finishing that call: a removal that
// fails is tried again once, a moment later.
func RemoveTempDirs(bound time.Duration) {
	withTemps.Lock()
	sbs := make([]*Sandbox, 0, len(withTemps.set))
	for s := range withTemps.set {
		sbs = append(sbs, s)
	}
	withTemps.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, s := range sbs {
			s.temp.mu.Lock()
			base := s.temp.base
			s.temp.mu.Unlock()
			if base != "" && os.RemoveAll(base) != nil {
				time.Sleep(20 * time.Millisecond)
			}
			s.removeTempDir()
		}
	}()
	select {
	case <-done:
	case <-time.After(bound):
	}
}
