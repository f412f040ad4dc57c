package filesystem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// root is a directory the toolset may touch: the working directory or one
// it lists.
type root struct {
	real string   // absolute, symlinks resolved
	os   *os.Root // every file operation goes through it
	main bool     // the working directory
}

func openRoots(workingDir string, allowed []string) ([]*root, error) {
	dir, err := wd(workingDir)
	if err != nil {
		return nil, fmt.Errorf("filesystem: cannot find the working directory: %w", err)
	}
	var roots []*root
	add := func(d string, main bool) error {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return fmt.Errorf("filesystem: directory %s: %w", d, err)
		}
		r, err := os.OpenRoot(real)
		if err != nil {
			return fmt.Errorf("filesystem: directory %s: %w", d, err)
		}
		roots = append(roots, &root{real: real, os: r, main: main})
		return nil
	}
	if err := add(dir, true); err != nil {
		return nil, err
	}
	for _, a := range allowed {
		if !filepath.IsAbs(a) {
			a = filepath.Join(dir, a)
		}
		if err := add(filepath.Clean(a), false); err != nil {
			for _, r := range roots {
				r.os.Close()
			}
			return nil, err
		}
	}
	return roots, nil
}

// target is a path the model named, checked: inside root r at rel.
type target struct {
	given string // as the model gave it
	root  *root
	rel   string // relative to root.real, OS separators, symlinks resolved ("." for the root)
	real  string // absolute, symlinks resolved (the deepest existing parent's)
}

// ruleName is the path as permission rules match it: relative to the
// working directory with forward slashes, or absolute for a path in a
// directory the toolset lists. It names where the change really lands
// (symlinks resolved, "./" and "x/../" gone), so a rule for docs/* never
// lets docs/../secrets through.
func (tg target) ruleName() string {
	if tg.root.main {
		return filepath.ToSlash(tg.rel)
	}
	return filepath.ToSlash(tg.real)
}

// errOutside is the refusal for a path outside every allowed directory.
var errOutside = errors.New("outside the working directory")

// resolve checks p: relative paths are relative to the working directory;
// symlinks are resolved as far as the path exists (a file not yet made is
// judged by its deepest existing parent); the result must lie in the working
// directory or a directory the toolset lists.
func (t *Toolset) resolve(p string) (target, error) {
	if strings.ContainsRune(p, 0) {
		return target{}, fmt.Errorf("path %q holds a NUL character", p)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(t.roots[0].real, p)
	}
	abs = filepath.Clean(abs)
	real, err := resolveExisting(abs)
	if err != nil {
		return target{}, fmt.Errorf("path %q: %w", p, err)
	}
	for _, r := range t.roots {
		if rel, ok := within(r.real, real); ok {
			return target{given: p, root: r, rel: rel, real: real}, nil
		}
	}
	return target{}, fmt.Errorf("path %q is %w %s (after resolving symlinks it is %s); the filesystem toolset only touches files there%s",
		p, errOutside, t.roots[0].real, real, t.listedNote())
}

func (t *Toolset) listedNote() string {
	if len(t.roots) == 1 {
		return ""
	}
	var ds []string
	for _, r := range t.roots[1:] {
		ds = append(ds, r.real)
	}
	return " and in " + strings.Join(ds, ", ")
}

// resolveExisting resolves the symlinks of the deepest existing ancestor of
// abs (abs itself when it exists) and appends the rest.
func resolveExisting(abs string) (string, error) {
	rest := ""
	cur := abs
	for i := 0; i < 4096; i++ {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			if rest == "" {
				return real, nil
			}
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			// A symlink loop, a parent that is a file, no permission.
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		base := filepath.Base(cur)
		if rest == "" {
			rest = base
		} else {
			rest = filepath.Join(base, rest)
		}
		cur = parent
	}
	return "", errors.New("path too deep")
}

// within reports whether p lies in dir (both clean and absolute) and p's
// path relative to dir.
func within(dir, p string) (string, bool) {
	if p == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(p, prefix) {
		return "", false
	}
	return p[len(prefix):], true
}
