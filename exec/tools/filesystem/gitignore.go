package filesystem

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// A subset of gitignore(5), written here rather than taken from go-git
// (whose module brings a whole git implementation) or sabhiram/go-gitignore
// (unmaintained, no nested files): blank lines and # comments, trailing
// spaces, \ escapes, ! negation, a trailing / for directories only, a / at
// the start or in the middle anchoring the pattern to its file's
// directory, *, ?, [...] classes and ** in all its forms; nested .gitignore
// files (a deeper file wins over a shallower one, a later line over an
// earlier one) and .git/info/exclude. A file inside an ignored directory
// stays ignored whatever a later negation says, as in git (walks never
// enter ignored directories).

// maxIgnoreFile bounds the .gitignore bytes read per file.
const maxIgnoreFile = 256 << 10

type ignorePattern struct {
	neg, dirOnly, anchored bool
	lit                    string // literal: the whole name (not anchored) or path (anchored)
	suffix                 string // "*.ext"-like, not anchored: the name ends with suffix
	re                     *regexp.Regexp
}

func (p *ignorePattern) match(rel, name string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	switch {
	case p.re != nil:
		if p.anchored {
			return p.re.MatchString(rel)
		}
		return p.re.MatchString(name)
	case p.suffix != "":
		return strings.HasSuffix(name, p.suffix)
	case p.anchored:
		return rel == p.lit
	default:
		return name == p.lit
	}
}

type ignoreFrame struct {
	dir  string // absolute; patterns are relative to it
	pats []*ignorePattern
}

// ignorer decides, during one listing or walk, which paths ignore_vcs hides.
// It holds the rules of the directories from the repository's top down to
// the directory being visited, nothing more.
type ignorer struct {
	frames []*ignoreFrame
}

// newIgnorer prepares the rules that apply at dir (absolute, real): those
// of every .gitignore from the repository's top (the nearest ancestor with
// a .git, else the confining root) down to dir. hidden reports that dir
// itself is ignored (or inside .git): everything under it is hidden.
func newIgnorer(rootDir, dir string) (ig *ignorer, hidden bool) {
	top := gitTop(dir)
	if top == "" {
		top = rootDir
	}
	ig = &ignorer{}
	if top != "" {
		if pats := readIgnoreFile(filepath.Join(top, ".git", "info", "exclude")); len(pats) > 0 {
			ig.frames = append(ig.frames, &ignoreFrame{dir: top, pats: pats})
		}
	}
	// Directories from top down to dir.
	var chain []string
	for d := dir; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if d == top || filepath.Dir(d) == d {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		d := chain[i]
		if i < len(chain)-1 && ig.ignored(d, true) {
			return ig, true
		}
		ig.enter(d)
	}
	return ig, false
}

// gitTop is the nearest ancestor of dir (or dir) holding a .git, or "".
func gitTop(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// enter adds dir's .gitignore, if any. Call it for each directory a walk
// goes into, after checking it is not ignored.
func (ig *ignorer) enter(dir string) {
	if pats := readIgnoreFile(filepath.Join(dir, ".gitignore")); len(pats) > 0 {
		ig.frames = append(ig.frames, &ignoreFrame{dir: dir, pats: pats})
	}
}

// ignored reports whether path (absolute) is hidden: .git, or ignored by
// the rules of its ancestors. Paths must come in walk order (a directory
// before what it holds): frames of directories path is not in are dropped.
func (ig *ignorer) ignored(path string, isDir bool) bool {
	name := filepath.Base(path)
	if name == ".git" {
		return true
	}
	for len(ig.frames) > 0 {
		if _, ok := within(ig.frames[len(ig.frames)-1].dir, path); ok && path != ig.frames[len(ig.frames)-1].dir {
			break
		}
		ig.frames = ig.frames[:len(ig.frames)-1]
	}
	for i := len(ig.frames) - 1; i >= 0; i-- {
		f := ig.frames[i]
		rel, _ := within(f.dir, path)
		rel = filepath.ToSlash(rel)
		for j := len(f.pats) - 1; j >= 0; j-- {
			if f.pats[j].match(rel, name, isDir) {
				return !f.pats[j].neg
			}
		}
	}
	return false
}

func readIgnoreFile(path string) []*ignorePattern {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return nil
	}
	return parseIgnore(data)
}

func parseIgnore(data []byte) []*ignorePattern {
	var pats []*ignorePattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFile)
	for sc.Scan() {
		if p := parseIgnoreLine(sc.Text()); p != nil {
			pats = append(pats, p)
		}
	}
	return pats
}

func parseIgnoreLine(line string) *ignorePattern {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return nil
	}
	// Trailing spaces are dropped unless escaped.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" {
		return nil
	}
	p := &ignorePattern{}
	if line[0] == '!' {
		p.neg = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return nil
	}
	if strings.Contains(line, "/") {
		p.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	if strings.HasPrefix(line, "**/") {
		// "**/x" matches x at any depth: the same as an unanchored x when
		// no other slash follows.
		if rest := line[3:]; !strings.Contains(rest, "/") {
			p.anchored = false
			line = rest
		}
	}
	if !strings.ContainsAny(line, `*?[\`) {
		p.lit = line
		return p
	}
	if !p.anchored && strings.HasPrefix(line, "*") && !strings.ContainsAny(line[1:], `*?[\`) {
		p.suffix = line[1:]
		return p
	}
	re, err := regexp.Compile("^" + globRegexp(line) + "$")
	if err != nil {
		return nil // a broken pattern ignores nothing (git does the same)
	}
	p.re = re
	return p
}

// globRegexp translates a gitignore glob to a regular expression over a
// slash-separated path.
func globRegexp(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch c {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				atStart := i == 0 || g[i-1] == '/'
				j := i + 2
				if atStart && j < len(g) && g[j] == '/' {
					b.WriteString("(?:.*/)?") // "**/": zero or more directories
					i = j
					continue
				}
				if atStart && j == len(g) {
					b.WriteString(".*") // trailing "/**": everything inside
					i = j - 1
					continue
				}
				b.WriteString("[^/]*")
				i++
				continue
			}
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := i + 1
			if j < len(g) && (g[j] == '!' || g[j] == '^') {
				j++
			}
			if j < len(g) && g[j] == ']' {
				j++
			}
			for j < len(g) && g[j] != ']' {
				j++
			}
			if j >= len(g) {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : j]
			if class != "" && class[0] == '!' {
				class = "^" + class[1:]
			}
			class = strings.ReplaceAll(class, `\`, `\\`)
			b.WriteString("[" + class + "]")
			i = j
		case '\\':
			if i+1 < len(g) {
				i++
				b.WriteString(regexp.QuoteMeta(string(g[i])))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}
