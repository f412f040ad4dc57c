package filesystem

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Hidden is a path hidden from what runs unasked (DESIGN §15): a credential
// store or a permissions.deny_read path. By names what hides it, as a
// person reads it ("permissions.deny_read", "the credential stores").
type Hidden struct {
	Path string // absolute
	By   string
}

// hiddenPath is a Hidden path by every name it has now: as named, and with
// its symlinks resolved as far as it exists (each call resolves them anew:
// a link retargeted since hides where it points now).
type hiddenPath struct {
	names []string
	by    string
	shown string // as the person named it
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
		hp := hiddenPath{names: []string{named}, by: h.By, shown: named}
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
				return fmt.Sprintf("%s, in %s (%s)", displayPath(given), h.shown, h.by)
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

// hiddenIn says what hides a path the call's arguments name (path, paths),
// as Approval.Hidden says it: each hidden one, "; "-joined; "" for none. An
// empty path is the working directory where dir is set. A path that does
// not resolve counts for nothing (the call refuses it). What holds a hidden
// path needs no asking: remove_directory removes only empty directories.
func (t *Toolset) hiddenIn(raw json.RawMessage, dir bool) string {
	if len(t.opts.Hidden) == 0 {
		return ""
	}
	var args struct {
		Path  *string  `json:"path"`
		Paths []string `json:"paths"`
	}
	if json.Unmarshal(raw, &args) != nil {
		return ""
	}
	paths := args.Paths
	if args.Path != nil {
		paths = append([]string{*args.Path}, paths...)
	}
	hidden := t.hiddenPaths()
	var whys []string
	for _, p := range paths {
		if p == "" && dir {
			p = "."
		}
		if p == "" {
			continue
		}
		tg, err := t.resolve(p)
		if err != nil {
			continue
		}
		if why := hiddenAt(hidden, p, tg.real); why != "" {
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
