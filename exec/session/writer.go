package session

// Writing a journal: each record is written through — written, synced,
// and its MAC kept as the journal's head — before the run goes on.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/receipt"
	"github.com/hitl-dev/hitl/prompt"
)

// Journal is an open session file, locked for this process.
type Journal struct {
	mu    sync.Mutex
	path  string
	f     *os.File
	w     *bufio.Writer
	err   error
	chain chain // authenticates each record (auth.go)
	// acted are the calls that acted before the run was stopped (Loaded.Acted).
	acted map[string]*CallResult
	Model Stateful // set by the run when its model is stateful
}

// Create starts a new journal at path (mode 0600) and writes its header.
// Every record is authenticated with key.
func Create(path string, h Header, key Key) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("session %s already exists: continue it with hitl resume %s, or choose another --session", path, path)
		}
		return nil, fmt.Errorf("session %s: %w", path, err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, err
	}
	j := newJournal(path, f, chain{key: key, runID: h.RunID})
	h.Version = Version
	j.write(record{Kind: "header", Header: &h})
	return j, j.err
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

func (j *Journal) write(r record) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil || j.f == nil {
		return // a record after Close (a background agent ending late) is not kept
	}
	data, err := json.Marshal(r)
	if err != nil {
		j.err = err
		return
	}
	data = append(j.chain.seal(data), '\n')
	if _, err := j.w.Write(data); err != nil {
		j.err = err
		return
	}
	j.err = j.sync()
}

// sync writes out and syncs what was written, and keeps the last MAC as
// the journal's head (the caller holds mu).
func (j *Journal) sync() error {
	if j.f == nil {
		return errors.New("the journal is closed")
	}
	if err := j.w.Flush(); err != nil {
		return err
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	j.chain.key.writeHead(j.path, j.chain.runID, j.chain.prev)
	return nil
}

// Message records a message appended to the conversation, with the counters
// and the model's position after it.
func (j *Journal) Message(m exec.Message, st *exec.State) error {
	r := record{Kind: "message", Message: &m, Iterations: st.Iterations, Usage: &st.Usage}
	if j.Model != nil && m.Role == exec.RoleAssistant {
		r.ModelState = j.Model.State()
	}
	j.write(r)
	return j.err
}

// In is the journal of the conversation frame (a sub-agent's or a
// background agent's, DESIGN §13): its messages are recorded with the
// frame, and model, when set, gives its model's position after each of
// its turns.
func (j *Journal) In(frame string, model Stateful) exec.Journal {
	return &frameJournal{j: j, frame: frame, model: model}
}

type frameJournal struct {
	j     *Journal
	frame string
	model Stateful
}

func (f *frameJournal) Started(id string) error { return f.j.Started(id) }

func (f *frameJournal) Ended(id string, res exec.Result) error { return f.j.Ended(id, res) }

func (f *frameJournal) Stopped(id string) error { return f.j.Stopped(id) }

func (f *frameJournal) Recorded(id string) (exec.Result, bool) { return f.j.Recorded(id) }

func (f *frameJournal) Message(m exec.Message, st *exec.State) error {
	r := record{Kind: "message", Frame: f.frame, Message: &m, Iterations: st.Iterations, Usage: &st.Usage}
	if f.model != nil && m.Role == exec.RoleAssistant {
		r.ModelState = f.model.State()
	}
	f.j.write(r)
	return f.j.err
}

// Receipt records who approved what.
func (j *Journal) Receipt(s receipt.Signed) {
	j.write(record{Kind: "receipt", Receipt: &s})
}

// Task records a background task's start or end.
func (j *Journal) Task(t json.RawMessage) {
	j.write(record{Kind: "task", Task: t})
}

// Requested records that a question was asked (its id, so a resumed run asks
// the pending call's questions under the same ids).
func (j *Journal) Requested(q prompt.Question) {
	j.write(record{Kind: "question", CallID: q.CallID, Index: q.Index, PromptID: q.ID})
}

// SecretQuestion is a secret question answered before a stop (the
// question, never the value, and its placeholder number).
type SecretQuestion = prompt.SecretRecord

// Answered records an answer, unless it holds a secret: for a secret, only
// the question and its placeholder number (prompt.SecretRecords), so a
// resumed run asks it again.
func (j *Journal) Answered(q prompt.Question, a prompt.Answer) {
	if prompt.HasSecret(q) {
		for _, sq := range prompt.SecretRecords(q, a) {
			j.write(record{Kind: "secret", Secret: &sq})
		}
		return
	}
	j.write(record{Kind: "answer", CallID: q.CallID, Index: q.Index, PromptID: q.ID, Answer: &a})
}

// Approval records a shell command approved for the session.
func (j *Journal) Approval(command string) {
	j.write(record{Kind: "approval", Command: command})
}

// ToolApproval records a tool call approved for the session by its key
// (exec.Approval.SessionKey).
func (j *Journal) ToolApproval(key string) {
	j.write(record{Kind: "approval", Key: key})
}

// CallState records what a tool keeps of the call callID as the run stops
// in the middle of it (an MCP call whose server waits for input), for a
// resumed run to continue the call with; nil forgets what was kept. The
// caller keeps secret values out of it.
func (j *Journal) CallState(callID string, state json.RawMessage) {
	j.write(record{Kind: "call_state", CallID: callID, CallState: state})
}

// Sandbox records what confines the children of the run from here on
// (DESIGN §12): bwrap, landlock or none.
func (j *Journal) Sandbox(mechanism string) {
	j.write(record{Kind: "sandbox", Sandbox: mechanism})
}

// Started records that call id is about to act (a shell command about to
// start), on disk before it does: exec.CallJournal.
func (j *Journal) Started(id string) error {
	j.write(record{Kind: "call_start", CallID: id})
	return j.errOf()
}

// Ended records the result of call id, which acted.
func (j *Journal) Ended(id string, res exec.Result) error {
	j.write(record{Kind: "call_end", CallID: id, Result: &CallResult{Text: res.Text, IsError: res.IsError}})
	return j.errOf()
}

// Stopped records that call id was stopped by the run (a signal ended its
// processes): a resumed run runs it again.
func (j *Journal) Stopped(id string) error {
	j.write(record{Kind: "call_stopped", CallID: id})
	return j.errOf()
}

// Recorded is what the journal read on Open holds of call id: the result
// of a call that acted, or, for one that started and never ended (the run
// was killed while it ran), a result saying it was not run again.
func (j *Journal) Recorded(id string) (exec.Result, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r, ok := j.acted[id]
	switch {
	case !ok:
		return exec.Result{}, false
	case r == nil:
		return exec.Result{IsError: true, Text: exec.InterruptedText}, true
	}
	return exec.Result{Text: r.Text, IsError: r.IsError}, true
}

func (j *Journal) errOf() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// End records how the run ended.
func (j *Journal) End(s exec.Status) {
	j.write(record{Kind: "end", Status: s})
}

func newJournal(path string, f *os.File, c chain) *Journal {
	return &Journal{path: path, f: f, w: bufio.NewWriterSize(f, 64*1024), chain: c}
}

// Flush writes out and syncs the journal without closing it: for a second
// Ctrl-C, which exits without unwinding. Every record is already written
// through; Flush makes sure of it.
func (j *Journal) Flush() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		_ = j.sync()
	}
}

// Close flushes and syncs the journal and releases the lock.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return j.err
	}
	err := j.sync()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	j.f = nil
	if j.err == nil {
		j.err = err
	}
	return err
}

// Remove closes and deletes the journal (after a successful run).
func (j *Journal) Remove() error {
	_ = j.Close()
	j.chain.key.removeHead(j.path, j.chain.runID)
	return os.Remove(j.path)
}
