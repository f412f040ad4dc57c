package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hitl-dev/hitl/exec"
)

// Summary describes a kept session, for hitl sessions.
type Summary struct {
	ID        string `json:"id"`
	Path      string `json:"path"`
	Agent     string `json:"agent"`
	AgentFile string `json:"agent_file"`
	// Dir is the directory the run started in (hitl resume runs there).
	Dir      string      `json:"dir,omitempty"`
	Status   exec.Status `json:"status"` // "" when the run never recorded an end (killed)
	Modified time.Time   `json:"modified"`
	// Pending is the question the run waits for ("p3 user_prompt"), when
	// it stopped for input.
	Pending string `json:"pending,omitempty"`
	// Err says why the file could not be read; the other fields but ID,
	// Path and Modified are then empty.
	Err string `json:"error,omitempty"`
}

// List summarises the sessions kept in dir, oldest first. A missing dir
// holds none.
func List(dir string) ([]Summary, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	var out []Summary
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		s := Summary{ID: strings.TrimSuffix(e.Name(), ".jsonl"), Path: path, Modified: fi.ModTime()}
		if l, err := readFile(path); err != nil {
			s.Err = err.Error()
		} else {
			s.Agent, s.AgentFile, s.Dir, s.Status = l.Header.Agent, l.Header.AgentFile, l.Header.Dir, l.Status
			if l.Status == exec.StatusInputRequired && l.LastPrompt > 0 {
				s.Pending = fmt.Sprintf("p%d", l.LastPrompt)
				if calls := exec.PendingCalls(l.State.Messages); len(calls) > 0 {
					s.Pending += " " + calls[0].Name
				}
			}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Modified.Before(out[j].Modified) })
	return out, nil
}

// readFile reads a journal without claiming it or verifying it (a
// listing shows what a file says; resuming it verifies it).
func readFile(path string) (*Loaded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path, nil)
}

// Prune removes the sessions in dir last written before cutoff, except
// those a hitl process holds. It returns the paths removed (with dryRun,
// those it would remove: nothing is removed).
func Prune(dir string, cutoff time.Time, dryRun bool) ([]string, error) {
	list, err := List(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, s := range list {
		if !s.Modified.Before(cutoff) {
			continue
		}
		f, err := os.OpenFile(s.Path, os.O_RDWR, 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := lock(f); err != nil {
			f.Close()
			continue // in use: a run or resume holds it
		}
		if dryRun {
			f.Close()
			removed = append(removed, s.Path)
			continue
		}
		err = os.Remove(s.Path)
		f.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, s.Path)
	}
	if !dryRun {
		pruneHeads(filepath.Join(filepath.Dir(dir), "heads"), cutoff)
	}
	return removed, errors.Join(errs...)
}

// pruneHeads removes the kept last MACs (auth.go) last written before
// cutoff: of sessions pruned, deleted by hand, or moved away.
func pruneHeads(dir string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
