// Package memory is cagent's memory toolset: add_memory, get_memories,
// delete_memory, search_memories and update_memory over notes the agent
// keeps across runs in one file.
//
// The store is a JSON file (not cagent's SQLite database, which would need
// a large dependency or cgo): each change takes an exclusive lock on a
// sibling ".lock" file, reads the file, and writes it anew through a
// temporary file renamed over it, so a crash or a second hitl never leaves
// it half written. The file is mode 0600 in a 0700 directory and bounded
// (MaxFileBytes), so a model cannot fill the disk or the context. A file
// that is not a hitl memory file (cagent's memory.db, say) is never
// overwritten: New refuses it.
//
// The tools never ask: the notes are the agent's own, in a file its author
// chose, and every note written is in the conversation and the events. An
// ask or deny rule (ask: [add_memory]) still applies through the run's
// gate.
package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/hitl-dev/hitl/exec"
)

// Tool names.
const (
	AddMemory      = "add_memory"
	GetMemories    = "get_memories"
	DeleteMemory   = "delete_memory"
	SearchMemories = "search_memories"
	UpdateMemory   = "update_memory"
)

// Bounds.
const (
	// MaxFileBytes is the most the memory file may hold; a change that
	// would make it larger is refused (the model is told to delete or
	// shorten notes).
	MaxFileBytes = 1 << 20
	// MaxMemory is the most characters of one note.
	MaxMemory = 10000
	// MaxCategory is the most characters of a category.
	MaxCategory = 100
	// lockWait is how long a call waits for another process's lock.
	lockWait = 10 * time.Second
)

// Instructions is the toolset's guidance for the system prompt (cagent's).
const Instructions = `## Memory Tools

Check stored memories for relevant context before acting. Store useful information silently — never mention using this tool.

- Remember: user preferences, corrections, key decisions, project conventions
- Use search_memories with keywords/category for targeted lookup; use get_memories only for a full dump
- Use update_memory to edit existing entries; use add_memory only for new information
- Organize with categories: "preference", "fact", "project", "decision"`

// Memory is one note, in cagent's shape.
type Memory struct {
	ID        string `json:"id"`
	CreatedAt string `json:"created_at"`
	Memory    string `json:"memory"`
	Category  string `json:"category,omitempty"`
}

// file is what the memory file holds.
type file struct {
	Memories []Memory `json:"memories"`
}

// Options configure the toolset.
type Options struct {
	// Path is the toolset's path: the memory file. A relative path is
	// relative to BaseDir. Empty: DefaultPath(Name).
	Path string
	// BaseDir is --working-dir (default: the process's directory).
	BaseDir string
	// Name names the default file's directory, as cagent's config name
	// does: the agent file's name without its extension. Empty: "default".
	Name string
	// Getenv reads the environment for DefaultPath (default os.Getenv).
	Getenv func(string) string
}

// DefaultPath is where an agent's notes are kept when its toolset names no
// path: $XDG_DATA_HOME/hitl/memory/NAME/memory.json, else
// ~/.local/share/hitl/memory/NAME/memory.json.
func DefaultPath(name string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if name == "" {
		name = "default"
	}
	if name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("memory: %q cannot name a directory", name)
	}
	base := getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(base) { // the XDG spec: a relative value is ignored
		home := getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("memory: no data directory: set XDG_DATA_HOME or HOME, or give the toolset a path: %w", err)
			}
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "hitl", "memory", name, "memory.json"), nil
}

// Toolset is one memory file and its tools.
type Toolset struct {
	path string
	mu   sync.Mutex // one change at a time within this process
	now  func() time.Time
	last int64 // the last id given, so ids never repeat
}

// New returns the toolset of the memory file o says. The file need not
// exist (it is made on the first note); if it exists it must be a memory
// file this package wrote.
func New(o Options) (*Toolset, error) {
	p := o.Path
	if p == "" {
		var err error
		if p, err = DefaultPath(o.Name, o.Getenv); err != nil {
			return nil, err
		}
	} else if !filepath.IsAbs(p) {
		base := o.BaseDir
		if base == "" {
			wd, err := os.Getwd()
			if err != nil {
				return nil, fmt.Errorf("memory: cannot find the current directory: %w", err)
			}
			base = wd
		}
		p = filepath.Join(base, p)
	}
	s := &Toolset{path: filepath.Clean(p), now: time.Now}
	if _, err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the memory file.
func (s *Toolset) Path() string { return s.path }

// modelError is a call the model got wrong: an error result, not a stop.
type modelError struct{ msg string }

func (e *modelError) Error() string { return e.msg }

func wrong(format string, args ...any) error {
	return &modelError{fmt.Sprintf(format, args...)}
}

// load reads the memory file; a missing file is empty. It is opened
// without blocking and must be a regular file: a FIFO planted in its place
// would hold the run forever, a device is no memory file.
func (s *Toolset) load() (*file, error) {
	f, err := os.OpenFile(s.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return &file{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("memory %s: %w", s.path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("memory %s: not a regular file: it is not one hitl wrote; give the toolset another path", s.path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("memory %s: %w", s.path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("memory %s: the file is larger than %d bytes: it is not one hitl wrote; give the toolset another path", s.path, MaxFileBytes)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return &file{}, nil // nothing to lose
	}
	var m struct {
		Memories *[]Memory `json:"memories"`
	}
	err = json.Unmarshal(data, &m)
	if err == nil && m.Memories == nil {
		err = errors.New("it has no memories list")
	}
	if err != nil {
		return nil, fmt.Errorf("memory %s: not a hitl memory file (a JSON object with a memories list): %v; hitl does not read cagent's SQLite memory.db: give the toolset another path", s.path, err)
	}
	return &file{Memories: *m.Memories}, nil
}

// save writes m to a temporary file in the same directory and renames it
// over the memory file.
func (s *Toolset) save(m *file) error {
	if m.Memories == nil {
		m.Memories = []Memory{}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("memory %s: %w", s.path, err)
	}
	if len(data) > MaxFileBytes {
		return wrong("the memory store is full (at most %d bytes): delete or shorten memories first", MaxFileBytes)
	}
	dir := filepath.Dir(s.path)
	tmp, err := os.CreateTemp(dir, ".memory-*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("memory %s: %w", s.path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename: nothing to remove
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("memory %s: %w", s.path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("memory %s: %w", s.path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("memory %s: %w", s.path, err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("memory %s: %w", s.path, err)
	}
	return nil
}

// with runs fn on the file's notes under the locks, and saves them when fn
// says they changed.
func (s *Toolset) with(ctx context.Context, write bool, fn func(*file) (changed bool, err error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if write {
		if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
			return fmt.Errorf("memory %s: %w", s.path, err)
		}
	}
	// Never through a symlink: one planted there would have hitl create
	// a file wherever it points.
	lf, err := os.OpenFile(s.path+".lock", os.O_RDWR|os.O_CREATE|lockOpenFlags, 0o600)
	switch {
	case err == nil:
		defer lf.Close()
		if err := lockFile(ctx, lf, lockWait); err != nil {
			return fmt.Errorf("memory %s: %w", s.path, err)
		}
	case !write && errors.Is(err, fs.ErrNotExist):
		// No directory yet: nothing to read, nobody to race.
	default:
		return fmt.Errorf("memory %s: %w", s.path, err)
	}
	m, err := s.load()
	if err != nil {
		return err
	}
	changed, err := fn(m)
	if err != nil || !changed {
		return err
	}
	return s.save(m)
}

// newID is cagent's form (the time in nanoseconds), never one given
// before by this process nor one in the file.
func (s *Toolset) newID(m *file) string {
	id := max(s.now().UnixNano(), s.last+1)
	for slices.ContainsFunc(m.Memories, func(x Memory) bool { return x.ID == strconv.FormatInt(id, 10) }) {
		id++
	}
	s.last = id
	return strconv.FormatInt(id, 10)
}

// Tools returns the five memory tools.
func (s *Toolset) Tools() []exec.Tool {
	return []exec.Tool{
		&tool{s: s, call: s.add, spec: exec.ToolSpec{
			Name:        AddMemory,
			Description: "Add a new memory to the database",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"memory":{"type":"string","description":"The memory content to store"},` +
				`"category":{"type":"string","description":"Optional category to organize the memory (e.g. preference, fact, project)"}},` +
				`"required":["memory"],"additionalProperties":false}`),
		}},
		&tool{s: s, call: s.get, spec: exec.ToolSpec{
			Name:        GetMemories,
			Description: "Retrieve all stored memories",
			Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
		}},
		&tool{s: s, call: s.delete, spec: exec.ToolSpec{
			Name:        DeleteMemory,
			Description: "Delete a specific memory by ID",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"id":{"type":"string","description":"The ID of the memory to delete"}},` +
				`"required":["id"],"additionalProperties":false}`),
		}},
		&tool{s: s, call: s.search, spec: exec.ToolSpec{
			Name:        SearchMemories,
			Description: "Search memories by keywords and/or category. More efficient than retrieving all memories.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"query":{"type":"string","description":"Keywords to search for in memory content (space-separated, all must match)"},` +
				`"category":{"type":"string","description":"Optional category to filter by"}},` +
				`"additionalProperties":false}`),
		}},
		&tool{s: s, call: s.update, spec: exec.ToolSpec{
			Name:        UpdateMemory,
			Description: "Update an existing memory's content and/or category by ID",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"id":{"type":"string","description":"The ID of the memory to update"},` +
				`"memory":{"type":"string","description":"The new memory content"},` +
				`"category":{"type":"string","description":"Optional new category for the memory"}},` +
				`"required":["id","memory"],"additionalProperties":false}`),
		}},
	}
}

type tool struct {
	s    *Toolset
	spec exec.ToolSpec
	call func(ctx context.Context, raw json.RawMessage) (string, error)
}

func (t *tool) Spec() exec.ToolSpec { return t.spec }

// Call runs the tool. Bad arguments and a full store are error results; a
// memory file that cannot be read or written stops the run (a tool
// infrastructure failure), since going on would lose the notes silently.
func (t *tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	text, err := t.call(ctx, call.Arguments)
	var me *modelError
	switch {
	case errors.As(err, &me):
		return exec.Result{IsError: true, Text: me.msg}, nil
	case err != nil:
		return exec.Result{}, fmt.Errorf("%s: %w", t.spec.Name, err)
	}
	return exec.Result{Text: text}, nil
}

type args struct {
	ID       *string `json:"id"`
	Memory   *string `json:"memory"`
	Category *string `json:"category"`
	Query    *string `json:"query"`
}

func decode(raw json.RawMessage) (args, error) {
	var a args
	if len(raw) == 0 {
		return a, nil
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, wrong("invalid arguments: %v", err)
	}
	return a, nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func checkMemory(p *string) error {
	switch {
	case p == nil:
		return wrong("invalid arguments: memory is required")
	case strings.TrimSpace(*p) == "":
		return wrong("invalid arguments: memory is empty: say what to remember")
	case utf8.RuneCountInString(*p) > MaxMemory:
		return wrong("invalid arguments: memory has more than %d characters", MaxMemory)
	}
	return nil
}

func checkCategory(p *string) error {
	if p != nil && utf8.RuneCountInString(*p) > MaxCategory {
		return wrong("invalid arguments: category has more than %d characters", MaxCategory)
	}
	return nil
}

func checkID(p *string) (string, error) {
	if p == nil || *p == "" {
		return "", wrong("invalid arguments: id is required (get_memories or search_memories list the ids)")
	}
	return *p, nil
}

func (s *Toolset) add(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode(raw)
	if err != nil {
		return "", err
	}
	if err := checkMemory(a.Memory); err != nil {
		return "", err
	}
	if err := checkCategory(a.Category); err != nil {
		return "", err
	}
	var id string
	err = s.with(ctx, true, func(m *file) (bool, error) {
		id = s.newID(m)
		m.Memories = append(m.Memories, Memory{ID: id, CreatedAt: s.now().Format(time.RFC3339), Memory: *a.Memory, Category: str(a.Category)})
		return true, nil
	})
	if err != nil {
		return "", err
	}
	return "Memory added successfully with ID: " + id, nil
}

func list(ms []Memory) (string, error) {
	if ms == nil {
		ms = []Memory{}
	}
	data, err := json.Marshal(ms)
	return string(data), err
}

func (s *Toolset) get(ctx context.Context, _ json.RawMessage) (string, error) {
	var out []Memory
	err := s.with(ctx, false, func(m *file) (bool, error) {
		out = m.Memories
		return false, nil
	})
	if err != nil {
		return "", err
	}
	return list(out)
}

// search keeps the notes that hold every word of query (case-insensitive)
// and, when category is given, have that category (case-insensitive).
func (s *Toolset) search(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode(raw)
	if err != nil {
		return "", err
	}
	words := strings.Fields(strings.ToLower(str(a.Query)))
	category := str(a.Category)
	var out []Memory
	err = s.with(ctx, false, func(m *file) (bool, error) {
		for _, x := range m.Memories {
			if category != "" && !strings.EqualFold(x.Category, category) {
				continue
			}
			text := strings.ToLower(x.Memory)
			if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(text, w) }) {
				out = append(out, x)
			}
		}
		return false, nil
	})
	if err != nil {
		return "", err
	}
	return list(out)
}

func (s *Toolset) delete(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode(raw)
	if err != nil {
		return "", err
	}
	id, err := checkID(a.ID)
	if err != nil {
		return "", err
	}
	err = s.with(ctx, true, func(m *file) (bool, error) {
		i := slices.IndexFunc(m.Memories, func(x Memory) bool { return x.ID == id })
		if i < 0 {
			return false, wrong("no memory has ID %s", id)
		}
		m.Memories = slices.Delete(m.Memories, i, i+1)
		return true, nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Memory with ID %s deleted successfully", id), nil
}

// update replaces a note's text, and its category when one is given.
func (s *Toolset) update(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode(raw)
	if err != nil {
		return "", err
	}
	id, err := checkID(a.ID)
	if err != nil {
		return "", err
	}
	if err := checkMemory(a.Memory); err != nil {
		return "", err
	}
	if err := checkCategory(a.Category); err != nil {
		return "", err
	}
	err = s.with(ctx, true, func(m *file) (bool, error) {
		i := slices.IndexFunc(m.Memories, func(x Memory) bool { return x.ID == id })
		if i < 0 {
			return false, wrong("no memory has ID %s", id)
		}
		m.Memories[i].Memory = *a.Memory
		if a.Category != nil {
			m.Memories[i].Category = *a.Category
		}
		return true, nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Memory with ID %s updated successfully", id), nil
}
