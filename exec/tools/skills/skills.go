// Package skills is cagent's agent key skills: (DESIGN §11): SKILL.md files
// found in the home directory and the project are listed in the system
// prompt by name and description, and the read_skill tool gives the model
// one of them whole. Only local skills: hitl fetches nothing from the
// network to build a prompt.
//
// Discovery runs once per run (Discover): the run sees one set of skills
// for its whole duration; read_skill reads a skill's file when it is
// called, and refuses a file that no longer is the skill it was.
package skills

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Bounds: a file larger than MaxFile, a name longer than MaxName or a
// description longer than MaxDescription (bytes) is skipped with a note;
// after MaxSkills skills, further names are skipped.
const (
	MaxFile        = 1 << 20
	MaxSkills      = 1000
	MaxName        = 256
	MaxDescription = 4096

	// FileName is the file a skill is.
	FileName = "SKILL.md"

	maxDirEntries = 10000  // read of one directory
	maxVisits     = 100000 // directory entries looked at by one Discover
	maxDepth      = 32     // directories below a recursive root
	maxNotes      = 100
)

// Skill is one skill found.
type Skill struct {
	Name        string
	Description string
	// Path is the SKILL.md file as found (under one of the roots).
	Path string
	// License, Compatibility, Metadata and AllowedTools are read from the
	// front matter (as cagent reads them) and not used.
	License       string
	Compatibility string
	Metadata      map[string]string
	AllowedTools  []string

	// real is Path with its symlinks resolved when it was found: the
	// file read_skill reads must still be that one.
	real string
}

// Note is a file that is not a skill although it is named like one, or a
// limit that stopped the search: hitl validate shows them.
type Note struct {
	Path string
	Msg  string
}

// String is the note for a terminal: control and format characters (in a
// file name, or a YAML error quoting the file) are escaped.
func (n Note) String() string { return Printable(n.Path + ": " + n.Msg) }

// Printable escapes s's control and format characters (ESC, bidi
// overrides, …) as Go escapes, for a terminal.
func Printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Set is what one Discover found.
type Set struct {
	// Skills are by name, in name order.
	Skills []Skill
	// Notes say which files were skipped and why, in search order.
	Notes []Note
	// Searched are the directories looked in, in search order (whether
	// they exist or not).
	Searched []string
	// Dropped counts the notes left out after maxNotes.
	Dropped int
}

// Lookup returns the skill named name.
func (s *Set) Lookup(name string) (Skill, bool) {
	if s == nil {
		return Skill{}, false
	}
	i := sort.Search(len(s.Skills), func(i int) bool { return s.Skills[i].Name >= name })
	if i < len(s.Skills) && s.Skills[i].Name == name {
		return s.Skills[i], true
	}
	return Skill{}, false
}

// root is one directory skills are looked for in.
type root struct {
	dir       string
	recursive bool // every SKILL.md below it; else only DIR/CHILD/SKILL.md
	// within, for a root in the project, is the project (its git root, or
	// cwd): a skill file there is read only when its real path lies in it,
	// so a repository's symlink cannot hand the model a file from
	// elsewhere on the machine. Roots in the home directory are the
	// person's own and follow symlinks, as cagent does.
	within string
}

// Roots are the directories Discover looks in, in cagent's order (later
// ones win a name): ~/.codex/skills (recursive), ~/.claude/skills (flat),
// ~/.agents/skills (recursive), CWD/.claude/skills (flat), then
// DIR/.agents/skills (flat) for each DIR from the git root (the nearest
// ancestor of cwd holding .git, a directory or a file) down to cwd; cwd
// alone outside a repository. home "" skips the home directory.
func roots(home, cwd string) []root {
	var out []root
	if home != "" {
		out = append(out,
			root{filepath.Join(home, ".codex", "skills"), true, ""},
			root{filepath.Join(home, ".claude", "skills"), false, ""},
			root{filepath.Join(home, ".agents", "skills"), true, ""})
	}
	if cwd != "" {
		dirs := projectDirs(cwd)
		project := dirs[0]
		out = append(out, root{filepath.Join(cwd, ".claude", "skills"), false, project})
		for _, dir := range dirs {
			out = append(out, root{filepath.Join(dir, ".agents", "skills"), false, project})
		}
	}
	return out
}

// projectDirs are the directories from cwd's git root down to cwd; cwd
// alone outside a repository.
func projectDirs(cwd string) []string {
	top := gitRoot(cwd)
	if top == "" {
		return []string{cwd}
	}
	var dirs []string
	for cur := cwd; ; {
		dirs = append(dirs, cur)
		if cur == top {
			break
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		cur = parent
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

// gitRoot is the nearest of dir and its ancestors holding a .git
// directory or file ("" for none).
func gitRoot(dir string) string {
	for cur := dir; ; {
		if st, err := os.Stat(filepath.Join(cur, ".git")); err == nil && (st.IsDir() || st.Mode().IsRegular()) {
			return cur
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return ""
		}
		cur = parent
	}
}

// Discover finds the local skills for a run in working directory cwd
// (made absolute) with home directory home ("" when there is none). It
// never fails: what cannot be read is a note.
func Discover(home, cwd string) *Set {
	if cwd != "" {
		if abs, err := filepath.Abs(cwd); err == nil {
			cwd = abs
		}
	}
	d := &discovery{set: &Set{}, byName: map[string]Skill{}}
	for _, r := range roots(home, cwd) {
		d.set.Searched = append(d.set.Searched, r.dir)
		d.scan(r)
	}
	names := make([]string, 0, len(d.byName))
	for n := range d.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d.set.Skills = append(d.set.Skills, d.byName[n])
	}
	return d.set
}

type discovery struct {
	set     *Set
	byName  map[string]Skill
	visits  int
	stopped bool
}

func (d *discovery) note(path, format string, args ...any) {
	if len(d.set.Notes) >= maxNotes {
		d.set.Dropped++
		return
	}
	d.set.Notes = append(d.set.Notes, Note{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (d *discovery) scan(r root) {
	st, err := os.Stat(r.dir)
	if err != nil || !st.IsDir() {
		return // no such root: nothing to say
	}
	if r.recursive {
		d.walk(r.dir, 0)
		return
	}
	entries, ok := d.readDir(r.dir)
	if !ok {
		return
	}
	for _, e := range entries {
		// Only real directories: cagent skips hidden and symlinked
		// children of a flat root.
		if d.stopped || !e.dir || hidden(e.name) {
			continue
		}
		d.load(filepath.Join(r.dir, e.name, FileName), true, r.within)
	}
}

// walk looks for SKILL.md files at any depth below dir, in name order,
// never following a symlinked directory (so no loop) nor entering a
// hidden one.
func (d *discovery) walk(dir string, depth int) {
	entries, ok := d.readDir(dir)
	if !ok {
		return
	}
	for _, e := range entries {
		if d.stopped {
			return
		}
		path := filepath.Join(dir, e.name)
		switch {
		case e.dir && hidden(e.name):
		case e.dir && depth >= maxDepth:
			d.note(path, "more than %d directories deep: not searched", maxDepth)
		case e.dir:
			d.walk(path, depth+1)
		case e.name == FileName:
			d.load(path, false, "")
		}
	}
}

type entry struct {
	name string
	dir  bool // a directory, not a symlink to one
}

// readDir lists dir in name order, bounded: at most maxDirEntries
// entries, and maxVisits over the whole discovery.
func (d *discovery) readDir(dir string) ([]entry, bool) {
	if d.stopped {
		return nil, false
	}
	f, err := openNonBlocking(dir)
	if err != nil {
		d.note(dir, "cannot be read: %v", unwrapPath(err))
		return nil, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		return nil, false
	}
	var out []entry
	for {
		batch, err := f.ReadDir(256)
		for _, e := range batch {
			out = append(out, entry{name: e.Name(), dir: e.Type().IsDir()})
		}
		if len(out) > maxDirEntries {
			d.note(dir, "more than %d entries: only the first %d read (in directory order)", maxDirEntries, maxDirEntries)
			out = out[:maxDirEntries]
			break
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			d.note(dir, "cannot be read: %v", unwrapPath(err))
			break
		}
	}
	if d.visits+len(out) > maxVisits {
		out = out[:maxVisits-d.visits]
		d.stopped = true
		d.note(dir, "the search stopped after %d entries; skills past this point are not listed", maxVisits)
	}
	d.visits += len(out)
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, true
}

// load reads the skill file at path. A missing file is no skill and no
// note when optional (a flat root's child without a SKILL.md).
func (d *discovery) load(path string, optional bool, within string) {
	if _, err := os.Lstat(path); err != nil && optional && errors.Is(err, os.ErrNotExist) {
		return
	}
	if msg := outside(path, within); msg != "" {
		d.note(path, "skipped: %s", msg)
		return
	}
	s, err := readSkill(path)
	if err != nil {
		d.note(path, "skipped: %v", err)
		return
	}
	if msg := outside(path, within); msg != "" { // swapped while read
		d.note(path, "skipped: %s", msg)
		return
	}
	if _, ok := d.byName[s.Name]; !ok && len(d.byName) >= MaxSkills {
		d.note(path, "skipped: more than %d skills", MaxSkills)
		return
	}
	d.byName[s.Name] = s
}

// outside says why path, symlinks resolved, does not lie in the directory
// within ("" when it does, or within is "").
func outside(path, within string) string {
	if within == "" {
		return ""
	}
	top, err := filepath.EvalSymlinks(within)
	if err != nil {
		return fmt.Sprintf("the project %s cannot be resolved: %v", within, unwrapPath(err))
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "" // readSkill says why it cannot be read
	}
	if real == top || strings.HasPrefix(real, top+string(filepath.Separator)) || top == string(filepath.Separator) {
		return ""
	}
	return fmt.Sprintf("it leads to %s (symlinks resolved), outside the project %s", real, top)
}

// readSkill reads and checks the skill file at path (symlinks followed,
// as cagent does).
func readSkill(path string) (Skill, error) {
	data, err := readFile(path)
	if err != nil {
		return Skill{}, err
	}
	fm, err := parse(data)
	if err != nil {
		return Skill{}, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return Skill{}, fmt.Errorf("cannot be read: %v", unwrapPath(err))
	}
	real, _ = filepath.Abs(real)
	return Skill{
		Name: fm.Name, Description: fm.Description, Path: path,
		License: fm.License, Compatibility: fm.Compatibility, Metadata: fm.Metadata, AllowedTools: fm.AllowedTools,
		real: real,
	}, nil
}

// readFile reads a regular file of at most MaxFile bytes of UTF-8 text.
// The open does not block on a FIFO (it is then refused as not a regular
// file).
func readFile(path string) ([]byte, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %v", unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %v", unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	tooLarge := fmt.Errorf("larger than %d KiB", MaxFile>>10)
	if st.Size() > MaxFile {
		return nil, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %v", unwrapPath(err))
	}
	if len(data) > MaxFile {
		return nil, tooLarge
	}
	if !utf8.Valid(data) {
		return nil, errors.New("not UTF-8 text")
	}
	return data, nil
}

func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// unwrapPath drops the path an *os.PathError repeats (the note names it).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// frontMatter is what a SKILL.md's front matter holds (cagent's fields).
type frontMatter struct {
	Name          string            `yaml:"name"`
	Description   string            `yaml:"description"`
	License       string            `yaml:"license"`
	Compatibility string            `yaml:"compatibility"`
	Metadata      map[string]string `yaml:"metadata"`
	AllowedTools  stringOrList      `yaml:"allowed-tools"`
}

// stringOrList is a list of strings, or one string of comma-separated
// items (cagent's allowed-tools).
type stringOrList []string

func (s *stringOrList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		*s = list
		return nil
	}
	var one string
	if err := n.Decode(&one); err != nil {
		return err
	}
	*s = nil
	for _, p := range strings.Split(one, ",") {
		if t := strings.TrimSpace(p); t != "" {
			*s = append(*s, t)
		}
	}
	return nil
}

// parse reads a SKILL.md's front matter: the file starts with a --- line
// and the front matter ends at the next line starting with --- (line ends
// CRLF and CR read as LF). name and description are required.
func parse(data []byte) (frontMatter, error) {
	var fm frontMatter
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	first, rest, _ := strings.Cut(s, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return fm, errors.New("no front matter: the file must start with a --- line")
	}
	block := ""
	if !strings.HasPrefix(rest, "---") {
		end := strings.Index(rest, "\n---")
		if end < 0 {
			return fm, errors.New("the front matter has no closing --- line")
		}
		block = rest[:end]
	}
	if err := yaml.Unmarshal([]byte(block), &fm); err != nil {
		return fm, fmt.Errorf("the front matter is not valid: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	switch {
	case strings.TrimSpace(fm.Name) == "":
		return fm, errors.New("the front matter has no name")
	case strings.TrimSpace(fm.Description) == "":
		return fm, errors.New("the front matter has no description")
	case len(fm.Name) > MaxName:
		return fm, fmt.Errorf("the name is longer than %d bytes", MaxName)
	case len(fm.Description) > MaxDescription:
		return fm, fmt.Errorf("the description is longer than %d bytes", MaxDescription)
	}
	return fm, nil
}

// Prompt is cagent's skills section of the system prompt: how to use
// read_skill, then every skill's name and description (as written:
// nothing is escaped, as in cagent), in name order (cagent's is map
// order). "" when there are none.
func (s *Set) Prompt() string {
	if s == nil || len(s.Skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Skills provide specialized instructions for specific tasks. ")
	b.WriteString("When a user's request matches a skill's description, use read_skill to load its instructions.\n\n")
	b.WriteString("<available_skills>\n")
	for _, sk := range s.Skills {
		b.WriteString("  <skill>\n    <name>")
		b.WriteString(sk.Name)
		b.WriteString("</name>\n    <description>")
		b.WriteString(sk.Description)
		b.WriteString("</description>\n  </skill>\n")
	}
	b.WriteString("</available_skills>")
	return b.String()
}
