// Package session keeps a run's journal: an append-only JSONL file with one
// record per step (message, question, answer, approval), from which a stopped
// run is resumed. It holds the conversation, the answers of a pending call,
// the counters, and the agent file's path and SHA-256 — never expanded
// variables or secret values. Records are buffered and synced when the run
// stops or exits, so the loop never rewrites a growing file.
package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// Version of the journal format.
const Version = 1

// Header is the first record of a journal.
type Header struct {
	Version int       `json:"version"`
	RunID   string    `json:"run_id"`
	Created time.Time `json:"created"`
	// AgentFile is the agent file's path relative to the working directory
	// of the run that created the session.
	AgentFile   string `json:"agent_file"`
	AgentSHA256 string `json:"agent_sha256"`
	Agent       string `json:"agent"`
	// Message is the first user turn (the script model's .Message).
	Message string `json:"message"`
}

// record is one line of the journal.
type record struct {
	Kind string `json:"kind"` // header, message, question, answer, approval, end

	Header *Header `json:"header,omitempty"`

	Message    *exec.Message   `json:"message,omitempty"`
	Iterations int             `json:"iterations,omitempty"`
	Usage      *exec.Usage     `json:"usage,omitempty"`
	ModelState json.RawMessage `json:"model_state,omitempty"`

	CallID   string         `json:"call_id,omitempty"`
	Index    int            `json:"index,omitempty"`
	PromptID string         `json:"prompt_id,omitempty"`
	Answer   *prompt.Answer `json:"answer,omitempty"`

	Command string `json:"command,omitempty"`

	// Secret is a secret question answered (never its value) and the
	// number of its placeholder, so a resumed run can ask it again.
	Secret *SecretQuestion `json:"secret,omitempty"`

	Status exec.Status `json:"status,omitempty"`
}

// Stateful is a model whose position must survive a resume (the script
// model).
type Stateful interface {
	State() json.RawMessage
	Restore(json.RawMessage) error
}

// ErrInUse is a session another hitl process is running or resuming.
var ErrInUse = errors.New("the session is in use by another hitl process")

// Journal is an open session file, locked for this process.
type Journal struct {
	mu    sync.Mutex
	path  string
	f     *os.File
	w     *bufio.Writer
	err   error
	Model Stateful // set by the run when its model is stateful
}

// DefaultDir is where sessions are kept: $XDG_STATE_HOME/hitl/sessions, else
// ~/.local/state/hitl/sessions.
func DefaultDir(getenv func(string) string) (string, error) {
	base := getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no state directory: set XDG_STATE_HOME or HOME, or pass --session FILE: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "hitl", "sessions"), nil
}

// Create starts a new journal at path (mode 0600) and writes its header.
func Create(path string, h Header) (*Journal, error) {
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
	j := newJournal(path, f)
	h.Version = Version
	j.write(record{Kind: "header", Header: &h})
	return j, j.err
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

func (j *Journal) write(r record) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return
	}
	data, err := json.Marshal(r)
	if err != nil {
		j.err = err
		return
	}
	data = append(data, '\n')
	if _, err := j.w.Write(data); err != nil {
		j.err = err
	}
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

// Requested records that a question was asked (its id, so a resumed run asks
// the pending call's questions under the same ids).
func (j *Journal) Requested(q prompt.Question) {
	j.write(record{Kind: "question", CallID: q.CallID, Index: q.Index, PromptID: q.ID})
}

// SecretQuestion is a secret question answered before a stop: the question
// (never the value) and the placeholder number the model holds for it.
type SecretQuestion struct {
	N        int             `json:"n"`
	Question prompt.Question `json:"question"`
}

// Answered records an answer, unless it holds a secret: for a secret, only
// the question and its placeholder number, so a resumed run asks it again.
func (j *Journal) Answered(q prompt.Question, a prompt.Answer) {
	if q.Secret || hasSecretFields(q) {
		j.secretAsked(q, a)
		return
	}
	j.write(record{Kind: "answer", CallID: q.CallID, Index: q.Index, PromptID: q.ID, Answer: &a})
}

// secretAsked records the secret questions of an accepted answer with the
// placeholder numbers the model got: the question itself, or each secret
// field of a form as a question of its own.
func (j *Journal) secretAsked(q prompt.Question, a prompt.Answer) {
	if a.Action != prompt.Accept {
		return
	}
	record := func(sq prompt.Question, content json.RawMessage) {
		var p string
		if json.Unmarshal(content, &p) != nil {
			return
		}
		if n := prompt.PlaceholderNumber(p); n > 0 {
			sq.SecretSlot = 0
			j.write(record{Kind: "secret", Secret: &SecretQuestion{N: n, Question: sq}})
		}
	}
	if q.Secret {
		record(q, a.Content)
		return
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(a.Content, &fields) != nil {
		return
	}
	for _, f := range q.Fields {
		if f.Question.Secret {
			fq := f.Question
			fq.CallID, fq.Tool, fq.Secret = q.CallID, q.Tool, true
			fq.Message = q.Message + ": " + fq.Message
			record(fq, fields[f.Name])
		}
	}
}

func hasSecretFields(q prompt.Question) bool {
	for _, f := range q.Fields {
		if f.Question.Secret {
			return true
		}
	}
	return false
}

// Approval records a shell command approved for the session.
func (j *Journal) Approval(command string) {
	j.write(record{Kind: "approval", Command: command})
}

// End records how the run ended.
func (j *Journal) End(s exec.Status) {
	j.write(record{Kind: "end", Status: s})
}

func newJournal(path string, f *os.File) *Journal {
	return &Journal{path: path, f: f, w: bufio.NewWriterSize(f, 64*1024)}
}

// Flush writes out and syncs the journal without closing it: for a second
// Ctrl-C, which exits without unwinding, so the run stays resumable from
// its last completed step (the run registers it in its signal context).
func (j *Journal) Flush() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil && j.w.Flush() == nil {
		_ = j.f.Sync()
	}
}

// Close flushes and syncs the journal and releases the lock.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return j.err
	}
	err := j.w.Flush()
	if err == nil {
		err = j.f.Sync()
	}
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
	return os.Remove(j.path)
}

// Loaded is what a journal says about a run.
type Loaded struct {
	Header     Header
	State      exec.State
	ModelState json.RawMessage
	// Answers are the recorded answers by call id and question index.
	Answers map[string]map[int]prompt.Answer
	// FirstPrompt is, per call id, the number of its first question.
	FirstPrompt map[string]int
	// LastPrompt is the number of the last question asked.
	LastPrompt int
	Approvals  []string
	// Secrets are the secret questions answered, by placeholder number.
	Secrets []SecretQuestion
	Status  exec.Status // the last end record; "" when none
}

// Open locks the session at path, reads it, and reopens it for appending.
func Open(path string) (*Journal, *Loaded, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("session: %w", err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, nil, err
	}
	l, err := read(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, nil, err
	}
	return newJournal(path, f), l, nil
}

func read(r io.Reader, path string) (*Loaded, error) {
	l := &Loaded{Answers: map[string]map[int]prompt.Answer{}, FirstPrompt: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			// A torn last line (the process was killed mid-write) is
			// dropped; anything else is a damaged file.
			if !sc.Scan() {
				break
			}
			return nil, fmt.Errorf("session %s:%d: not a journal record: %v", path, n, err)
		}
		if n == 1 && rec.Kind != "header" {
			return nil, fmt.Errorf("session %s: not a hitl session (no header)", path)
		}
		if err := rec.check(n); err != nil {
			return nil, fmt.Errorf("session %s:%d: %v", path, n, err)
		}
		l.apply(rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("session %s: %w", path, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("session %s is empty", path)
	}
	if l.Header.Version != Version {
		return nil, fmt.Errorf("session %s has format version %d; this hitl reads version %d", path, l.Header.Version, Version)
	}
	return l, nil
}

// check refuses a record that lacks what apply reads (a damaged or edited
// file), so loading it never dereferences nil.
func (r record) check(n int) error {
	switch {
	case r.Kind == "header" && n > 1:
		return errors.New("a second header")
	case r.Kind == "header" && r.Header == nil:
		return errors.New("a header record without its header")
	case r.Kind == "message" && r.Message == nil:
		return errors.New("a message record without its message")
	case r.Kind == "answer" && r.Answer == nil:
		return errors.New("an answer record without its answer")
	case r.Kind == "secret" && r.Secret == nil:
		return errors.New("a secret record without its question")
	}
	return nil
}

func (l *Loaded) apply(rec record) {
	switch rec.Kind {
	case "header":
		l.Header = *rec.Header
	case "message":
		l.State.Messages = append(l.State.Messages, *rec.Message)
		l.State.Iterations = rec.Iterations
		if rec.Usage != nil {
			l.State.Usage = *rec.Usage
		}
		if len(rec.ModelState) > 0 {
			l.ModelState = rec.ModelState
		}
		l.Status = ""
	case "question":
		num := promptNumber(rec.PromptID)
		if _, ok := l.FirstPrompt[rec.CallID]; !ok {
			l.FirstPrompt[rec.CallID] = num
		}
		l.LastPrompt = max(l.LastPrompt, num)
	case "answer":
		if l.Answers[rec.CallID] == nil {
			l.Answers[rec.CallID] = map[int]prompt.Answer{}
		}
		l.Answers[rec.CallID][rec.Index] = *rec.Answer
	case "secret":
		l.Secrets = append(l.Secrets, *rec.Secret)
	case "approval":
		l.Approvals = append(l.Approvals, rec.Command)
	case "end":
		l.Status = rec.Status
	}
}

func promptNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "p"))
	return n
}

// Replay answers the questions of the pending calls that were answered before
// the run stopped, so a resumed call does not ask them again.
type Replay struct {
	answers map[string]map[int]prompt.Answer
}

// NewReplay replays the answers recorded for calls.
func NewReplay(l *Loaded, calls []exec.ToolCall) *Replay {
	r := &Replay{answers: map[string]map[int]prompt.Answer{}}
	for _, c := range calls {
		if a, ok := l.Answers[c.ID]; ok {
			r.answers[c.ID] = a
		}
	}
	return r
}

// Answer returns the recorded answer of q's call and index, once.
func (r *Replay) Answer(q prompt.Question) (prompt.Answer, bool, error) {
	if !q.Replayable() {
		return prompt.Answer{}, false, nil
	}
	a, ok := r.answers[q.CallID][q.Index]
	if !ok {
		return prompt.Answer{}, false, nil
	}
	delete(r.answers[q.CallID], q.Index)
	a.Source = prompt.SourceSession
	return a, true, nil
}

// NextPrompt is the question counter to resume with: the pending calls ask
// their questions again under the ids they had.
func (l *Loaded) NextPrompt(calls []exec.ToolCall) int {
	first := 0
	for _, c := range calls {
		if n, ok := l.FirstPrompt[c.ID]; ok && (first == 0 || n < first) {
			first = n
		}
	}
	if first > 0 {
		return first - 1
	}
	return l.LastPrompt
}
