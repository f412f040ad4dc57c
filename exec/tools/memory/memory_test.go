package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
)

func newAt(t *testing.T, path string) *Toolset {
	t.Helper()
	s, err := New(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.now = func() time.Time { clock = clock.Add(time.Nanosecond); return clock }
	return s
}

func run(t *testing.T, s *Toolset, name, args string) exec.Result {
	t.Helper()
	for _, tool := range s.Tools() {
		if tool.Spec().Name == name {
			res, err := tool.Call(context.Background(), exec.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)})
			if err != nil {
				t.Fatalf("%s(%s): %v", name, args, err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", name)
	return exec.Result{}
}

// Each step's result is cagent's text or JSON; notes survive a new Toolset
// on the same file (a later run).
func TestResultShapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "memory.json")
	s := newAt(t, path)
	const (
		id1 = "1767323045000000001"
		id2 = "1767323045000000003"
	)
	at := "2026-01-02T03:04:05Z"
	steps := []struct {
		tool, args string
		want       string
		isError    bool
	}{
		{GetMemories, `{}`, `[]`, false},
		{SearchMemories, `{"query":"x"}`, `[]`, false},
		{AddMemory, `{"memory":"User prefers Go","category":"preference"}`, "Memory added successfully with ID: " + id1, false},
		{AddMemory, `{"memory":"The deploy target is staging"}`, "Memory added successfully with ID: " + id2, false},
		{GetMemories, ``, `[{"id":"` + id1 + `","created_at":"` + at + `","memory":"User prefers Go","category":"preference"},{"id":"` + id2 + `","created_at":"` + at + `","memory":"The deploy target is staging"}]`, false},
		{SearchMemories, `{"query":"prefers GO"}`, `[{"id":"` + id1 + `","created_at":"` + at + `","memory":"User prefers Go","category":"preference"}]`, false},
		{SearchMemories, `{"query":"go staging"}`, `[]`, false},
		{SearchMemories, `{"category":"PREFERENCE"}`, `[{"id":"` + id1 + `","created_at":"` + at + `","memory":"User prefers Go","category":"preference"}]`, false},
		{SearchMemories, `{}`, `[{"id":"` + id1 + `","created_at":"` + at + `","memory":"User prefers Go","category":"preference"},{"id":"` + id2 + `","created_at":"` + at + `","memory":"The deploy target is staging"}]`, false},
		{UpdateMemory, `{"id":"` + id1 + `","memory":"User prefers Rust"}`, "Memory with ID " + id1 + " updated successfully", false},
		{UpdateMemory, `{"id":"` + id2 + `","memory":"Target: prod","category":"fact"}`, "Memory with ID " + id2 + " updated successfully", false},
		{GetMemories, `{}`, `[{"id":"` + id1 + `","created_at":"` + at + `","memory":"User prefers Rust","category":"preference"},{"id":"` + id2 + `","created_at":"` + at + `","memory":"Target: prod","category":"fact"}]`, false},
		{DeleteMemory, `{"id":"` + id1 + `"}`, "Memory with ID " + id1 + " deleted successfully", false},
		{GetMemories, `{}`, `[{"id":"` + id2 + `","created_at":"` + at + `","memory":"Target: prod","category":"fact"}]`, false},
		// Mistakes are error results saying what is expected.
		{DeleteMemory, `{"id":"` + id1 + `"}`, "no memory has ID " + id1, true},
		{DeleteMemory, `{}`, "invalid arguments: id is required (get_memories or search_memories list the ids)", true},
		{UpdateMemory, `{"id":"nope","memory":"x"}`, "no memory has ID nope", true},
		{UpdateMemory, `{"id":"` + id2 + `"}`, "invalid arguments: memory is required", true},
		{AddMemory, `{}`, "invalid arguments: memory is required", true},
		{AddMemory, `{"memory":" "}`, "invalid arguments: memory is empty: say what to remember", true},
		{AddMemory, `{"memory":"` + strings.Repeat("é", MaxMemory+1) + `"}`, "invalid arguments: memory has more than 10000 characters", true},
		{AddMemory, `{"memory":"x","category":"` + strings.Repeat("c", MaxCategory+1) + `"}`, "invalid arguments: category has more than 100 characters", true},
		{AddMemory, `{"memory":1}`, "", true},
	}
	for i, st := range steps {
		res := run(t, s, st.tool, st.args)
		if res.IsError != st.isError || (st.want != "" && res.Text != st.want) {
			t.Errorf("step %d %s(%.60s):\n got %v %s\nwant %v %s", i, st.tool, st.args, res.IsError, res.Text, st.isError, st.want)
		}
	}
	later := newAt(t, path)
	if got := run(t, later, GetMemories, `{}`).Text; !strings.Contains(got, "Target: prod") || strings.Contains(got, "Rust") {
		t.Errorf("a later run reads %s", got)
	}
}

// The file is 0600 in a 0700 directory, written whole (no temporary file
// left), and readable JSON.
func TestFileModesAndAtomicWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	path := filepath.Join(dir, "memory.json")
	s := newAt(t, path)
	run(t, s, AddMemory, `{"memory":"a"}`)
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600, path + ".lock": 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files left: %v", entries)
	}
	var f file
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &f); err != nil || len(f.Memories) != 1 {
		t.Errorf("file: %s (%v)", data, err)
	}
}

// A file hitl did not write (cagent's SQLite memory.db, other JSON) is
// refused at New and left as it was.
func TestForeignFileRefused(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"memory.db":  "SQLite format 3\x00\x10\x00",
		"other.json": `{"notes":[]}`,
		"array.json": `[]`,
		"big.json":   `{"memories":[],"x":"` + strings.Repeat("x", MaxFileBytes) + `"}`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := New(Options{Path: path})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: New: %v", name, err)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("%s changed", name)
		}
	}
	// An empty file is an empty store.
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, nil, 0o600)
	if res := run(t, newAt(t, empty), GetMemories, `{}`); res.Text != "[]" {
		t.Errorf("empty file: %+v", res)
	}
}

// The store is bounded: a note that would make the file larger than
// MaxFileBytes is refused and the file keeps what it had.
func TestStoreIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.json")
	s := newAt(t, path)
	note := `{"memory":"` + strings.Repeat("n", MaxMemory) + `"}`
	var refused exec.Result
	for i := 0; i < MaxFileBytes/MaxMemory+2; i++ {
		if res := run(t, s, AddMemory, note); res.IsError {
			refused = res
			break
		}
	}
	if !strings.Contains(refused.Text, "the memory store is full") {
		t.Fatalf("never refused: %+v", refused)
	}
	fi, _ := os.Stat(path)
	if fi.Size() > MaxFileBytes {
		t.Errorf("file has %d bytes", fi.Size())
	}
	if _, err := New(Options{Path: path}); err != nil {
		t.Errorf("a full store does not load again: %v", err)
	}
}

// Two toolsets on one file (two hitl runs) lose no note: each change
// holds the file lock.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.json")
	a, b := newAt(t, path), newAt(t, path)
	b.now = func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			if res := run(t, s, AddMemory, fmt.Sprintf(`{"memory":"note %d"}`, i)); res.IsError {
				t.Error(res.Text)
			}
		}()
	}
	wg.Wait()
	var got []Memory
	json.Unmarshal([]byte(run(t, a, GetMemories, `{}`).Text), &got)
	ids := map[string]bool{}
	for _, m := range got {
		ids[m.ID] = true
	}
	if len(got) != 20 || len(ids) != 20 {
		t.Errorf("%d notes, %d ids, want 20", len(got), len(ids))
	}
}

func TestDefaultPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name string
		env  map[string]string
		want string
		err  bool
	}{
		{"agent", map[string]string{"XDG_DATA_HOME": "/data", "HOME": "/home/u"}, "/data/hitl/memory/agent/memory.json", false},
		{"", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/hitl/memory/default/memory.json", false},
		{"agent", map[string]string{"XDG_DATA_HOME": "rel", "HOME": "/home/u"}, "/home/u/.local/share/hitl/memory/agent/memory.json", false},
		{"..", map[string]string{"HOME": "/home/u"}, "", true},
		{"a/b", map[string]string{"HOME": "/home/u"}, "", true},
	}
	for _, c := range cases {
		got, err := DefaultPath(c.name, env(c.env))
		if got != c.want || (err != nil) != c.err {
			t.Errorf("DefaultPath(%q, %v) = %q, %v", c.name, c.env, got, err)
		}
	}
	// New: a relative path is relative to BaseDir; no path is DefaultPath.
	base := t.TempDir()
	s, err := New(Options{Path: "notes.json", BaseDir: base})
	if err != nil || s.Path() != filepath.Join(base, "notes.json") {
		t.Errorf("relative path: %v %v", s, err)
	}
	s, err = New(Options{Name: "deploy", Getenv: env(map[string]string{"XDG_DATA_HOME": base})})
	if err != nil || s.Path() != filepath.Join(base, "hitl/memory/deploy/memory.json") {
		t.Errorf("default path: %v %v", s, err)
	}
}

// A memory file that cannot be written stops the run (an error, not a
// result the model might ignore).
func TestUnwritableStoreStopsTheRun(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Options{Path: filepath.Join(dir, "sub", "memory.json")})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "sub"), []byte("x"), 0o600) // the directory cannot be made
	tool := s.Tools()[0]
	_, err = tool.Call(context.Background(), exec.ToolCall{ID: "c", Name: AddMemory, Arguments: json.RawMessage(`{"memory":"a"}`)})
	if err == nil || !strings.Contains(err.Error(), "add_memory: memory ") {
		t.Errorf("err = %v", err)
	}
}
