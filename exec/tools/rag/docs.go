package rag

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
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

// collect reads the documents paths name: files, directories (every file
// under them, .git skipped) and globs (** included); a path that names
// nothing adds nothing, as in cagent. Binary files (a NUL byte) and files
// over MaxFileBytes are skipped, each said through skip.
func collect(paths []string, deny []string, skip func(string)) ([]doc, error) {
	seen := map[string]bool{}
	var files []string
	add := func(p string) error {
		if seen[p] {
			return nil
		}
		seen[p] = true
		if len(files) >= MaxFiles {
			return fmt.Errorf("more than %d documents; name fewer files in docs:", MaxFiles)
		}
		files = append(files, p)
		return nil
	}
	walk := func(root string) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if d.Name() == ".git" {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				return add(p)
			}
			return nil
		})
	}
	for _, p := range paths {
		if strings.ContainsAny(p, "*?[") {
			base, pattern := doublestar.SplitPattern(filepath.ToSlash(p))
			matches, err := doublestar.Glob(os.DirFS(base), pattern, doublestar.WithFilesOnly(), doublestar.WithNoFollow())
			if err != nil {
				return nil, fmt.Errorf("docs %q: %w", p, err)
			}
			sort.Strings(matches)
			for _, m := range matches {
				if err := add(filepath.Join(base, m)); err != nil {
					return nil, err
				}
			}
			continue
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			continue
		case fi.IsDir():
			if err := walk(p); err != nil {
				return nil, err
			}
		case fi.Mode().IsRegular():
			if err := add(p); err != nil {
				return nil, err
			}
		}
	}
	var out []doc
	total := 0
	for _, p := range files {
		data, err := readDoc(p, deny)
		if err != nil {
			skip(fmt.Sprintf("%s: %v", p, err))
			continue
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		if total += len(data); total > MaxBytes {
			return nil, fmt.Errorf("the documents hold more than %d bytes; name fewer files in docs:", MaxBytes)
		}
		out = append(out, doc{path: p, text: string(data)})
	}
	return out, nil
}

// readDoc reads a regular file of at most MaxFileBytes, never one under
// /proc, /sys, /dev or deny (hitl's state: its session key), wherever a
// symlink points. It is opened
// without blocking and checked once open: a FIFO or device put in its
// place is refused, never read (a read could wait forever).
func readDoc(p string, deny []string) ([]byte, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	for _, d := range append([]string{"/proc", "/sys", "/dev"}, deny...) {
		if real == d || strings.HasPrefix(real, d+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s is not a document hitl reads (the system's or hitl's own files)", real)
		}
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
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
