package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

func TestJournalRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	j, err := Create(path, Header{RunID: "r1", AgentFile: "a.yaml", AgentSHA256: "abc", Agent: "root", Message: "hi"}, testKey("0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	st := &exec.State{}
	add := func(m exec.Message) {
		st.Messages = append(st.Messages, m)
		if m.Role == exec.RoleAssistant {
			st.Iterations++
		}
		if err := j.Message(m, st); err != nil {
			t.Fatal(err)
		}
	}
	add(exec.Message{Role: exec.RoleUser, Text: "hi"})
	add(exec.Message{Role: exec.RoleAssistant, ToolCalls: []exec.ToolCall{{ID: "c1", Name: "AskUserQuestion", Arguments: json.RawMessage(`{}`)}}})
	q0 := prompt.Question{ID: "p1", CallID: "c1", Index: 0}
	q1 := prompt.Question{ID: "p2", CallID: "c1", Index: 1, Secret: true}
	j.Requested(q0)
	j.Answered(q0, prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"a"`)})
	j.Requested(q1)
	j.Answered(q1, prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"$HITL_SECRET_1"`)})
	j.Approval("echo hi")
	j.End(exec.StatusInputRequired)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}

	j2, l, err := Open(path, testKey("0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if l.Header.RunID != "r1" || len(l.State.Messages) != 2 || l.State.Iterations != 1 || l.Status != exec.StatusInputRequired {
		t.Fatalf("loaded %+v", l)
	}
	pending := exec.PendingCalls(l.State.Messages)
	if n := l.NextPrompt(pending); n != 0 {
		t.Errorf("NextPrompt = %d, want 0 (the call asks p1 again)", n)
	}
	r := NewReplay(l, pending)
	if a, ok, _ := r.Answer(q0); !ok || string(a.Content) != `"a"` || a.Source != prompt.SourceSession {
		t.Errorf("replay q0: %+v %v", a, ok)
	}
	if _, ok, _ := r.Answer(q1); ok {
		t.Error("a secret answer was replayed")
	}
	if len(l.Approvals) != 1 || l.Approvals[0] != "echo hi" {
		t.Errorf("approvals %v", l.Approvals)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "HITL_SECRET") {
		t.Error("the secret's answer was journaled")
	}

	// A second opener is refused while the first holds the session.
	if _, _, err := Open(path, testKey("0123456789abcdef")); !errors.Is(err, ErrInUse) {
		t.Fatalf("second Open: %v, want ErrInUse", err)
	}
}

func TestOpenDamaged(t *testing.T) {
	dir := t.TempDir()
	key := testKey("0123456789abcdef")
	// write seals each whole line of content as hitl would, so the
	// records' own checks are what fails; a last line without its newline
	// (torn) and a line starting with "!" stay as they are.
	write := func(name, content string) string {
		c := &chain{key: key}
		var out []byte
		lines := strings.SplitAfter(content, "\n")
		for _, l := range lines {
			if !strings.HasSuffix(l, "\n") || strings.HasPrefix(l, "!") {
				out = append(out, strings.TrimPrefix(l, "!")...)
				continue
			}
			out = append(out, c.seal([]byte(strings.TrimSuffix(l, "\n")))...)
			out = append(out, '\n')
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, out, 0o600)
		return p
	}
	header := `{"kind":"header","header":{"version":1,"run_id":"r"}}` + "\n"
	tests := []struct {
		name, content, err string
	}{
		{"empty", "", "is empty"},
		{"no header", `{"kind":"message","message":{"role":"user"}}` + "\n", "not a hitl session"},
		{"version", `{"kind":"header","header":{"version":9}}` + "\n", "format version 9"},
		{"garbage in the middle", header + "!garbage\n" + `{"kind":"end"}` + "\n", ":2: refused: it carries no authentication code"},
		{"torn last line is dropped", header + `{"kind":"mess`, ""},
		{"header without header", `{"kind":"header"}` + "\n", ":1: a header record without its header"},
		{"message without message", header + `{"kind":"message"}` + "\n" + `{"kind":"end"}` + "\n", ":2: a message record without its message"},
		{"answer without answer", header + `{"kind":"answer","call_id":"c"}` + "\n" + `{"kind":"end"}` + "\n", ":2: an answer record without its answer"},
		{"second header", header + header + `{"kind":"end"}` + "\n", ":2: a second header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, _, err := Open(write(tt.name, tt.content), key)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				j.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

// A torn last line (hitl killed mid-write) is cut off when the session is
// opened again, so the records written next verify on the next resume.
func TestTornLastLineIsCutOff(t *testing.T) {
	key := testKey("0123456789abcdef")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	j, err := Create(path, Header{RunID: "r1", Agent: "root"}, key)
	if err != nil {
		t.Fatal(err)
	}
	st := &exec.State{Messages: []exec.Message{{Role: exec.RoleUser, Text: "hi"}}}
	j.Message(st.Messages[0], st)
	j.Close()
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"kind":"message","message":{"role":"assi`)
	f.Close()
	for i := range 2 {
		j, l, err := Open(path, key)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if len(l.State.Messages) != 1+i {
			t.Fatalf("open %d: %d messages, want %d", i, len(l.State.Messages), 1+i)
		}
		st := &exec.State{Messages: append(l.State.Messages, exec.Message{Role: exec.RoleUser, Text: "again"})}
		j.Message(st.Messages[len(st.Messages)-1], st)
		j.Close()
	}
}

// A call's kept state is read back by call id; the last record of a call
// wins, and an empty one forgets it.
func TestJournalCallStates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	key := testKey("0123456789abcdef")
	j, err := Create(path, Header{RunID: "r1", AgentFile: "a.yaml", Agent: "root"}, key)
	if err != nil {
		t.Fatal(err)
	}
	j.CallState("c1", json.RawMessage(`{"request_state":"one"}`))
	j.CallState("c2", json.RawMessage(`{"request_state":"a"}`))
	j.CallState("c1", json.RawMessage(`{"request_state":"two"}`))
	j.CallState("c2", nil)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j2, l, err := Open(path, key)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if got := string(l.CallStates["c1"]); got != `{"request_state":"two"}` {
		t.Errorf("c1 state %s, want the last one", got)
	}
	if _, ok := l.CallStates["c2"]; ok {
		t.Error("c2's state was not forgotten")
	}
}

// TestJournalWritesThrough pins that every record is on disk, verified,
// before the journal is closed (a run killed by SIGKILL loses nothing), and
// that the calls that acted come back: an ended call with its result, a
// started one as interrupted, one that never started not at all.
func TestJournalWritesThrough(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	key := testKey("0123456789abcdef")
	j, err := Create(path, Header{RunID: "r1", AgentFile: "a.yaml", AgentSHA256: "abc", Agent: "root", Message: "hi"}, key)
	if err != nil {
		t.Fatal(err)
	}
	st := &exec.State{Messages: []exec.Message{{Role: exec.RoleAssistant, ToolCalls: []exec.ToolCall{{ID: "c1", Name: "shell"}, {ID: "c2", Name: "shell"}, {ID: "c3", Name: "shell"}}}}}
	if err := j.Message(st.Messages[0], st); err != nil {
		t.Fatal(err)
	}
	q := prompt.Question{ID: "p1", CallID: "c1"}
	j.Requested(q)
	j.Answered(q, prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"once"`)})
	if err := j.Started("c1"); err != nil {
		t.Fatal(err)
	}
	if err := j.Ended("c1", exec.Result{Text: "done", IsError: true}); err != nil {
		t.Fatal(err)
	}
	if err := j.Started("c2"); err != nil {
		t.Fatal(err)
	}
	// Not closed: another process reads what a killed run left.
	l, err := Read(path, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.State.Messages) != 1 || l.Answers["c1"][0].Action != prompt.Accept {
		t.Fatalf("read before close: %+v", l)
	}
	j.f.Close() // as a kill would leave it: unflushed state dropped, no Close
	j2, _, err := Open(path, key)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	for _, tc := range []struct {
		id   string
		ok   bool
		want exec.Result
	}{
		{"c1", true, exec.Result{Text: "done", IsError: true}},
		{"c2", true, exec.Result{Text: exec.InterruptedText, IsError: true}},
		{"c3", false, exec.Result{}},
	} {
		got, ok := j2.Recorded(tc.id)
		if ok != tc.ok || got.Text != tc.want.Text || got.IsError != tc.want.IsError {
			t.Errorf("Recorded(%s) = %+v, %v; want %+v, %v", tc.id, got, ok, tc.want, tc.ok)
		}
	}
}
