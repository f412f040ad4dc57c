package rag

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/hitl-dev/hitl/internal/termtext"
)

// Bounds on what is indexed: a larger file is skipped (and said), and the
// documents of one strategy stop at MaxFiles and MaxBytes.
const (
	MaxFileBytes = 4 << 20
	MaxFiles     = 20000
	MaxBytes     = 64 << 20
)

// doc is one document: its path and text.
type doc struct {
	path string
	text string
}

// candidate is a file a docs: entry names: path as found, real its path
// with symlinks resolved, root the real path of what the entry names
// (the directory, the file, or the glob's fixed leading directories).
type candidate struct {
	path, real, root string
}

// collect reads the documents paths name: files, directories (every file
// under them, .git skipped) and globs (** included); a path that names
// nothing adds nothing, as in cagent. A document is read only when its real
// path (symlinks resolved) lies under the real path of what its entry
// names, and, for an entry written under the agent file's directory
// (anchor), when what it names really lies there; whatever else is found
// is skipped and said through skip: symlinks out, FIFOs and devices,
// binary files (a NUL byte), files over MaxFileBytes, hitl's own files.
// The end of ctx stops it.
func collect(ctx context.Context, paths []string, anchor string, deny []string, skip func(string)) ([]doc, error) {
	anchorReal := ""
	if anchor != "" {
		if r, err := filepath.EvalSymlinks(anchor); err == nil {
			anchorReal = r
		}
	}
	seen := map[string]bool{}
	var files []candidate
	add := func(c candidate) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(c.path)
		if err != nil {
			skip(fmt.Sprintf("%s: %v", shown(c.path), err))
			return nil
		}
		if !within(c.root, real) {
			skip(fmt.Sprintf("%s: it leads to %s (symlinks resolved), outside %s, which docs: names", shown(c.path), shown(real), shown(c.root)))
			return nil
		}
		if seen[real] {
			return nil
		}
		seen[real] = true
		if len(files) >= MaxFiles {
			return fmt.Errorf("more than %d documents; name fewer files in docs:", MaxFiles)
		}
		c.real = real
		files = append(files, c)
		return nil
	}
	for _, p := range paths {
		base, pattern := p, ""
		if strings.ContainsAny(p, "*?[") {
			base, pattern = doublestar.SplitPattern(filepath.ToSlash(p))
			base = filepath.FromSlash(base)
		}
		root, err := filepath.EvalSymlinks(base)
		if err != nil {
			continue // names nothing: adds nothing, as in cagent
		}
		if anchorReal != "" && within(filepath.Clean(anchor), filepath.Clean(base)) && !within(anchorReal, root) {
			skip(fmt.Sprintf("%s: it is %s (symlinks resolved), outside the agent file's directory %s", shown(base), shown(root), shown(anchorReal)))
			continue
		}
		if pattern != "" {
			matches, err := doublestar.Glob(os.DirFS(root), pattern, doublestar.WithFilesOnly(), doublestar.WithNoFollow())
			if err != nil {
				return nil, fmt.Errorf("docs %q: %w", p, err)
			}
			sort.Strings(matches)
			for _, m := range matches {
				if err := add(candidate{path: filepath.Join(base, filepath.FromSlash(m)), root: root}); err != nil {
					return nil, err
				}
			}
			continue
		}
		fi, err := os.Stat(root)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			if err := add(candidate{path: base, root: root}); err != nil {
				return nil, err
			}
			continue
		}
		err = filepath.WalkDir(root, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if d.Name() == ".git" {
					return filepath.SkipDir
				}
				return nil
			}
			rel, _ := filepath.Rel(root, q)
			return add(candidate{path: filepath.Join(base, rel), root: root})
		})
		if err != nil {
			return nil, err
		}
	}
	var out []doc
	total := 0
	for _, c := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := readDoc(c, deny)
		if err != nil {
			skip(fmt.Sprintf("%s: %v", shown(c.path), err))
			continue
		}
		if bytes.IndexByte(data, 0) >= 0 {
			skip(fmt.Sprintf("%s: binary (it holds a NUL byte)", shown(c.path)))
			continue
		}
		if total += len(data); total > MaxBytes {
			return nil, fmt.Errorf("the documents hold more than %d bytes; name fewer files in docs:", MaxBytes)
		}
		out = append(out, doc{path: c.path, text: string(data)})
	}
	return out, nil
}

// shown is a path as a notice says it: control characters escaped.
func shown(p string) string { return termtext.Line(p) }

// within reports whether p is dir or lies under it (both clean).
func within(dir, p string) bool {
	if p == dir || dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// readDoc reads c's file, a regular file of at most MaxFileBytes, never
// one under /proc, /sys, /dev or deny (hitl's state: its session key). It
// is opened through its root (os.Root): a symlink swapped in since it was
// resolved cannot lead out; opened without blocking and checked once
// open, a FIFO or device put in its place is refused, never read (a read
// could wait forever).
func readDoc(c candidate, deny []string) ([]byte, error) {
	for _, d := range append([]string{"/proc", "/sys", "/dev"}, deny...) {
		if within(d, c.real) {
			return nil, fmt.Errorf("%s is not a document hitl reads (the system's or hitl's own files)", shown(c.real))
		}
	}
	dir, name := c.root, "."
	if c.real == c.root {
		dir, name = filepath.Dir(c.real), filepath.Base(c.real)
	} else if rel, err := filepath.Rel(c.root, c.real); err == nil {
		name = rel
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", fi.Size(), MaxFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("more than %d bytes", MaxFileBytes)
	}
	return data, nil
}
