package filesystem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/hitl-dev/hitl/exec"
)

// maxDirRead bounds the entries read from one directory for list_directory
// (they are sorted before the first MaxListEntries are shown).
const maxDirRead = 100_000

type pathArgs struct {
	Path string `json:"path"`
}

type searchArgs struct {
	Path            string   `json:"path"`
	Query           string   `json:"query"`
	IsRegex         bool     `json:"is_regex"`
	ExcludePatterns []string `json:"excludePatterns"`
}

// dirTarget resolves a directory argument ("" is the working directory).
func (t *Toolset) dirTarget(p string) (target, error) {
	if p == "" {
		p = "."
	}
	tg, err := t.resolve(p)
	if err != nil {
		return target{}, err
	}
	st, err := tg.root.os.Stat(tg.rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return target{}, fmt.Errorf("%s: no such directory", p)
		}
		return target{}, tg.opError(err)
	}
	if !st.IsDir() {
		return target{}, fmt.Errorf("%s is not a directory", p)
	}
	return tg, nil
}

func (t *Toolset) listDirectory(ctx context.Context, raw json.RawMessage) (exec.Result, error) {
	var a pathArgs
	if err := decode(raw, &a); err != nil {
		return errorResult("%v", err), nil
	}
	tg, err := t.dirTarget(a.Path)
	if err != nil {
		return errorResult("%v", err), nil
	}
	var ig *ignorer
	if t.opts.IgnoreVCS {
		var hidden bool
		if ig, hidden = newIgnorer(tg.root.real, tg.real); hidden {
			return exec.Result{Text: fmt.Sprintf("(%s is hidden by ignore_vcs: it is .git or ignored by .gitignore)\n", displayPath(a.Path))}, nil
		}
	}
	f, err := tg.root.os.Open(tg.rel)
	if err != nil {
		return errorResult("%v", tg.opError(err)), nil
	}
	defer f.Close()
	var entries []fs.DirEntry
	more := false
	for len(entries) < maxDirRead {
		batch, err := f.ReadDir(1024)
		entries = append(entries, batch...)
		if err == io.EOF || len(batch) == 0 {
			break
		}
		if err != nil {
			return errorResult("reading directory %s: %v", displayPath(a.Path), err), nil
		}
		if err := ctx.Err(); err != nil {
			return exec.Result{}, err
		}
	}
	if len(entries) >= maxDirRead {
		more = true
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var b strings.Builder
	n, hidden := 0, 0
	for _, e := range entries {
		if ig != nil && ig.ignored(filepath.Join(tg.real, e.Name()), e.IsDir()) {
			hidden++
			continue
		}
		if n == MaxListEntries {
			more = true
			break
		}
		if e.IsDir() {
			fmt.Fprintf(&b, "DIR  %s\n", e.Name())
		} else {
			fmt.Fprintf(&b, "FILE %s\n", e.Name())
		}
		n++
	}
	if more {
		fmt.Fprintf(&b, "...output truncated: more than %d entries; list a subdirectory or use search_files_content...\n", n)
	}
	if n == 0 && !more {
		b.WriteString("(empty directory)\n")
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "(%d entries hidden by ignore_vcs)\n", hidden)
	}
	return exec.Result{Text: b.String()}, nil
}

// walker walks a directory tree in lexical order without loading it: one
// directory's entries at a time, ignore_vcs applied (ignored directories
// are never entered), symlinks never followed, the context checked.
type walker struct {
	ctx      context.Context
	start    string // absolute, real
	ig       *ignorer
	excludes []string
	visited  int
	// hide says whether an entry is left out (Options.Hidden); hidden
	// counts those left out.
	hide   func(abs string) bool
	hidden int
}

// errCapped stops a walk that reached its bound.
var errCapped = errors.New("capped")

// walk calls fn for each entry under w.start (not w.start itself) with its
// path relative to start (slashes). fn returning fs.SkipDir skips a
// directory; errCapped ends the walk.
func (w *walker) walk(fn func(abs, rel string, d fs.DirEntry) error) error {
	err := filepath.WalkDir(w.start, func(abs string, d fs.DirEntry, err error) error {
		w.visited++
		if w.visited%256 == 0 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		if abs == w.start {
			return err // an unreadable start is reported
		}
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil // an unreadable entry is skipped
		}
		rel, _ := within(w.start, abs)
		rel = filepath.ToSlash(rel)
		if w.ig != nil && w.ig.ignored(abs, d.IsDir()) {
			return skip(d)
		}
		if w.hide != nil && w.hide(abs) {
			w.hidden++
			return skip(d)
		}
		for _, ex := range w.excludes {
			if matchExclude(ex, rel) {
				return skip(d)
			}
		}
		if err := fn(abs, rel, d); err != nil {
			return err
		}
		if d.IsDir() && w.ig != nil {
			w.ig.enter(abs)
		}
		return nil
	})
	if errors.Is(err, errCapped) {
		return nil
	}
	if err == nil {
		err = w.ctx.Err()
	}
	return err
}

func skip(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// matchExclude is cagent's exclude-pattern rule: "dir/*" excludes dir and
// all under it; otherwise a glob matching the relative path, its base name,
// or any of its leading directories.
func matchExclude(pattern, rel string) bool {
	pattern = filepath.ToSlash(pattern)
	if dir, ok := strings.CutSuffix(pattern, "/*"); ok {
		if rel == dir || strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	if ok, _ := path.Match(pattern, rel); ok {
		return true
	}
	if ok, _ := path.Match(pattern, path.Base(rel)); ok {
		return true
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' {
			if ok, _ := path.Match(pattern, rel[:i]); ok {
				return true
			}
		}
	}
	return false
}

func (t *Toolset) newWalker(ctx context.Context, tg target, excludes []string) (*walker, bool) {
	w := &walker{ctx: ctx, start: tg.real, excludes: excludes}
	if len(t.opts.Hidden) > 0 {
		hidden := t.hiddenPaths()
		w.hide = func(abs string) bool { return hides(hidden, tg.real, abs) }
	}
	if t.opts.IgnoreVCS {
		ig, hidden := newIgnorer(tg.root.real, tg.real)
		if hidden {
			return nil, true
		}
		w.ig = ig
	}
	return w, false
}

// directoryTree writes cagent's JSON tree ({name, type, children}) while
// walking: only the open directories' names are held, never the tree.
func (t *Toolset) directoryTree(ctx context.Context, raw json.RawMessage) (exec.Result, error) {
	var a pathArgs
	if err := decode(raw, &a); err != nil {
		return errorResult("%v", err), nil
	}
	tg, err := t.dirTarget(a.Path)
	if err != nil {
		return errorResult("%v", err), nil
	}
	w, hidden := t.newWalker(ctx, tg, nil)
	if hidden {
		return exec.Result{Text: fmt.Sprintf("(%s is hidden by ignore_vcs: it is .git or ignored by .gitignore)\n", displayPath(a.Path))}, nil
	}
	var b bytes.Buffer
	writeNode := func(name, typ string) {
		b.WriteString(`{"name":`)
		q, _ := json.Marshal(name)
		b.Write(q)
		b.WriteString(`,"type":"` + typ + `"`)
	}
	writeNode(filepath.Base(tg.real), "directory")
	// open[i] is the relative path of the i-th open directory below the
	// start; firstChild[i] whether its children array has no element yet.
	var open []string
	first := []bool{true}
	hasChildren := []bool{false}
	closeTo := func(depth int) {
		for len(open) > depth {
			if hasChildren[len(hasChildren)-1] {
				b.WriteString("]")
			}
			b.WriteString("}")
			open, first, hasChildren = open[:len(open)-1], first[:len(first)-1], hasChildren[:len(hasChildren)-1]
		}
	}
	n, capped := 0, false
	err = w.walk(func(abs, rel string, d fs.DirEntry) error {
		if n >= MaxTreeEntries || b.Len() >= MaxResult {
			capped = true
			return errCapped
		}
		n++
		depth := strings.Count(rel, "/")
		closeTo(depth)
		i := len(first) - 1
		if !hasChildren[i] {
			b.WriteString(`,"children":[`)
			hasChildren[i] = true
		}
		if !first[i] {
			b.WriteString(",")
		}
		first[i] = false
		switch {
		case d.IsDir():
			writeNode(d.Name(), "directory")
			open = append(open, rel)
			first, hasChildren = append(first, true), append(hasChildren, false)
		case d.Type()&fs.ModeSymlink != 0:
			writeNode(d.Name(), "symlink")
			b.WriteString("}")
		default:
			writeNode(d.Name(), "file")
			b.WriteString("}")
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return exec.Result{}, ctx.Err()
		}
		return errorResult("reading directory %s: %v", displayPath(a.Path), err), nil
	}
	closeTo(0)
	if hasChildren[0] {
		b.WriteString("]")
	}
	b.WriteString("}")
	if capped {
		fmt.Fprintf(&b, "\n(tree cut at %d entries: ask for a subdirectory for the rest)", n)
	}
	if w.hidden > 0 {
		fmt.Fprintf(&b, "\n(%s)", hiddenNote(w.hidden, "shown"))
	}
	return exec.Result{Text: b.String()}, nil
}

// searchBuf holds one file being searched; reused across files and calls.
var searchBuf = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const previewMax = 100

func (t *Toolset) searchFilesContent(ctx context.Context, raw json.RawMessage) (exec.Result, error) {
	var a searchArgs
	if err := decode(raw, &a); err != nil {
		return errorResult("%v", err), nil
	}
	if a.Query == "" {
		return errorResult("query is empty: give the text or regular expression to search for"), nil
	}
	var re *regexp.Regexp
	lit := []byte(a.Query)
	if a.IsRegex {
		var err error
		if re, err = regexp.Compile(a.Query); err != nil {
			return errorResult("Invalid regex pattern: %v", err), nil
		}
	}
	tg, err := t.dirTarget(a.Path)
	if err != nil {
		return errorResult("%v", err), nil
	}
	w, hidden := t.newWalker(ctx, tg, a.ExcludePatterns)
	if hidden {
		return exec.Result{Text: "No results found (the path is hidden by ignore_vcs)"}, nil
	}
	bp := searchBuf.Get().(*[]byte)
	defer searchBuf.Put(bp)
	var out strings.Builder
	matches, files, large, capped := 0, 0, 0, false
	err = w.walk(func(abs, rel string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil // directories are walked; symlinks and devices never read
		}
		data, tooLarge := readForSearch(abs, (*bp)[:0])
		if tooLarge {
			large++
			return nil
		}
		if cap(data) > cap(*bp) && cap(data) <= MaxFileSize+1 {
			*bp = data[:0]
		}
		if len(data) == 0 || bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 {
			return nil // empty or binary
		}
		if re != nil {
			if !re.Match(data) {
				return nil
			}
		} else if !bytes.Contains(data, lit) {
			return nil
		}
		shown := filepath.ToSlash(filepath.Join(displayPath(a.Path), rel))
		found := false
		for line, rest := 1, data; len(rest) > 0; line++ {
			end := bytes.IndexByte(rest, '\n')
			var l []byte
			if end < 0 {
				l, rest = rest, nil
			} else {
				l, rest = rest[:end], rest[end+1:]
			}
			var loc []int
			if re != nil {
				loc = re.FindIndex(l)
			} else if i := bytes.Index(l, lit); i >= 0 {
				loc = []int{i, i + len(lit)}
			}
			if loc == nil {
				continue
			}
			if matches >= MaxMatches || out.Len() >= MaxResult {
				capped = true
				return errCapped
			}
			found = true
			matches++
			fmt.Fprintf(&out, "%s:%d:%d: %s\n", shown, line, loc[0]+1, preview(l, loc[0], loc[1]))
		}
		if found {
			files++
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return exec.Result{}, ctx.Err()
		}
		return errorResult("Error searching file contents: %v", err), nil
	}
	if matches == 0 {
		out.WriteString("No results found")
	} else {
		fmt.Fprintf(&out, "(%d matches in %d files", matches, files)
		if capped {
			fmt.Fprintf(&out, "; stopped at %d matches: narrow the path, the query or excludePatterns for more", MaxMatches)
		}
		out.WriteString(")")
	}
	if large > 0 {
		fmt.Fprintf(&out, "\n(%d files larger than %s not searched)", large, sizeText(MaxFileSize))
	}
	if w.hidden > 0 {
		fmt.Fprintf(&out, "\n(%s)", hiddenNote(w.hidden, "searched"))
	}
	return exec.Result{Text: out.String()}, nil
}

// readForSearch reads the regular file at abs into buf (grown as needed),
// or reports that it is larger than MaxFileSize. The final component is not
// followed (a symlink swapped in is not read) and a FIFO never blocks.
func readForSearch(abs string, buf []byte) ([]byte, bool) {
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK|oNoFollow, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, false
	}
	if st.Size() > MaxFileSize {
		return nil, true
	}
	if need := int(st.Size()) + 1; cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil || len(buf) == cap(buf) {
			break
		}
	}
	if len(buf) > MaxFileSize {
		return nil, true // it grew while being read
	}
	return buf, false
}

// preview is the matched line, cut around the match when longer than
// previewMax, at character boundaries.
func preview(l []byte, start, end int) string {
	if len(l) <= previewMax {
		return string(l)
	}
	from, to := max(start-20, 0), min(end+20, len(l))
	for from > 0 && !utf8.RuneStart(l[from]) {
		from--
	}
	for to < len(l) && !utf8.RuneStart(l[to]) {
		to++
	}
	s := string(l[from:to])
	if from > 0 {
		s = "…" + s
	}
	if to < len(l) {
		s += "…"
	}
	return s
}
