package filesystem

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Hidden is a path hidden from what runs unasked (DESIGN §15): a credential
// store, a permissions.deny_read path, hitl's state directory. By names what
// hides it, as a person reads it ("permissions.deny_read").
type Hidden struct {
	Path string // absolute
	By   string
}

// hiddenPath is a Hidden path by every name it has now: as named (first),
// and with its symlinks resolved as far as it exists (each call resolves
// them anew: a link retargeted since hides where it points now).
type hiddenPath struct {
	names []string
	by    string
}

// hiddenPaths are the toolset's Hidden paths as they are now.
func (t *Toolset) hiddenPaths() []hiddenPath {
	hs := t.opts.Hidden
	out := make([]hiddenPath, 0, len(hs))
	for _, h := range hs {
		if !filepath.IsAbs(h.Path) {
			continue
		}
		named := filepath.Clean(h.Path)
		hp := hiddenPath{names: []string{named}, by: h.By}
		if real, err := resolveExisting(named); err == nil && real != named {
			hp.names = append(hp.names, real)
		}
		out = append(out, hp)
	}
	return out
}

// hiddenAt says what of hidden hides real (absolute, symlinks resolved), a
// path in or at a hidden path, as Approval.Hidden says it; "" when nothing
// does.
func hiddenAt(hidden []hiddenPath, given, real string) string {
	for _, h := range hidden {
		for _, n := range h.names {
			if _, ok := within(n, real); ok {
				return fmt.Sprintf("%s, in %s (%s)", displayPath(given), h.names[0], h.by)
			}
		}
	}
	return ""
}

// hides says whether a walk from start skips abs: it lies in a hidden
// path that start does not (a person approved the walk of one it does).
func hides(hidden []hiddenPath, start, abs string) bool {
	for _, h := range hidden {
		for _, n := range h.names {
			if _, in := within(n, abs); in {
				if _, startIn := within(n, start); !startIn {
					return true
				}
			}
		}
	}
	return false
}

// hiddenIn says what hides a path the call's arguments name, as
// Approval.Hidden says it: each hidden one, "; "-joined; "" for none. Every
// string under path or paths counts, whatever else the arguments hold (a
// key of the wrong type beside them must not turn the check off), judged
// both as written and with its symlinks resolved. An empty path is the
// working directory where dir is set. What holds a hidden path
// needs no asking: remove_directory removes only empty directories.
func (t *Toolset) hiddenIn(raw json.RawMessage, dir bool) string {
	if len(t.opts.Hidden) == 0 || len(t.roots) == 0 {
		return ""
	}
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil {
		return "" // not an object: every tool refuses it
	}
	// As json.Unmarshal matches a struct's fields: whatever the case.
	var paths []string
	for k, v := range args {
		switch {
		case strings.EqualFold(k, "path"):
			if p, ok := v.(string); ok {
				paths = append(paths, p)
			}
		case strings.EqualFold(k, "paths"):
			list, _ := v.([]any)
			for _, item := range list {
				if p, ok := item.(string); ok {
					paths = append(paths, p)
				}
			}
		}
	}
	slices.Sort(paths) // one order for what it says
	hidden := t.hiddenPaths()
	var whys []string
	for _, p := range paths {
		if p == "" && dir {
			p = "."
		}
		if p == "" {
			continue
		}
		// As written (a link in a hidden directory that leads out of it
		// is still a name in it), and where it leads.
		named := p
		if !filepath.IsAbs(named) {
			named = filepath.Join(t.roots[0].real, named)
		}
		why := hiddenAt(hidden, p, filepath.Clean(named))
		if tg, err := t.resolve(p); err == nil && why == "" {
			why = hiddenAt(hidden, p, tg.real)
		}
		if why != "" {
			whys = append(whys, why)
		}
	}
	return strings.Join(whys, "; ")
}

// hiddenNote says that n paths a walk met were left out, hidden.
func hiddenNote(n int, what string) string {
	paths := "paths"
	if n == 1 {
		paths = "path"
	}
	return fmt.Sprintf("%d %s hidden from what runs unasked (the credential stores, permissions.deny_read) not %s: name one to be asked", n, paths, what)
}
