package session

// Reading a journal back, to resume its run.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/receipt"
	"github.com/hitl-dev/hitl/prompt"
)

// Loaded is what a journal says about a run.
type Loaded struct {
	Header     Header
	State      exec.State
	ModelState json.RawMessage
	// Answers are the recorded answers by call id and question index.
	Answers map[string]map[int]prompt.Answer
	// AnswerIDs are the prompt ids of Answers, by call id and index.
	AnswerIDs map[string]map[int]string
	// FirstPrompt is, per call id, the number of its first question.
	FirstPrompt map[string]int
	// LastPrompt is the number of the last question asked.
	LastPrompt int
	Approvals  []string
	// ToolApprovals are the keys of other tools' calls approved for the
	// session (exec.Approval.SessionKey).
	ToolApprovals []string
	// Secrets are the secret questions answered, by placeholder number.
	Secrets []SecretQuestion
	// CallStates are what tools kept of calls the run stopped in the
	// middle of, by call id (the last record of each call).
	CallStates map[string]json.RawMessage
	Status     exec.Status // the last end record; "" when none
	// Frames are the conversations of sub-agents and background agents,
	// by frame (DESIGN §13).
	Frames map[string]*exec.State
	// ModelStates are the models' positions by frame and agent
	// (ModelKey), from the last assistant message of each.
	ModelStates map[string]json.RawMessage
	// Tasks are the background tasks, the last record of each, in the
	// order they started.
	Tasks     []json.RawMessage
	taskIndex map[string]int
	// Receipts are who approved what, in order (DESIGN §14).
	Receipts []receipt.Signed
	// Acted are the calls that started to act (a shell command), by call
	// id: their result when they ended, nil when the run was stopped while
	// they ran.
	Acted map[string]*CallResult

	size int64 // bytes of the whole records read (a torn last line is not)
}

// Open locks the session at path, reads it, verifies every record with
// key, and reopens it for appending.
func Open(path string, key Key) (*Journal, *Loaded, error) {
	// O_NONBLOCK: a FIFO at path must not hang the open; it is refused
	// below, as anything but a regular file is.
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("session: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("session %s is not a regular file", path)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, nil, err
	}
	c := &chain{key: key, seen: map[string]bool{}}
	l, err := read(f, path, c)
	if err == nil {
		c.runID = l.Header.RunID
		if head := key.readHead(path, c.runID); head != nil && !c.seen[string(head)] {
			err = &TamperedError{Path: path, Line: len(c.seen) + 1, Reason: "records hitl wrote after this point are missing (the journal was cut short)", KeyFrom: key.From}
		}
		c.seen = nil
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	// A torn last line is cut off, so the next record starts a line.
	if err := endWhole(f, l.size); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("session %s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, nil, err
	}
	j := newJournal(path, f, *c)
	j.acted = l.Acted
	return j, l, nil
}

// Read reads the session at path and verifies every record with key, as
// Open does, without claiming it (hitl receipts reads a session a run may
// hold).
func Read(path string, key Key) (*Loaded, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("session %s is not a regular file", path)
	}
	return read(f, path, &chain{key: key, seen: map[string]bool{}})
}

// read loads a journal; with c set, every record must carry its MAC in
// the chain (DESIGN §5: a session carries no authority of its own).
func read(r io.Reader, path string, c *chain) (*Loaded, error) {
	l := &Loaded{
		Answers: map[string]map[int]prompt.Answer{}, AnswerIDs: map[string]map[int]string{},
		FirstPrompt: map[string]int{}, CallStates: map[string]json.RawMessage{},
		Frames: map[string]*exec.State{}, ModelStates: map[string]json.RawMessage{}, taskIndex: map[string]int{},
		Acted: map[string]*CallResult{},
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		size := int64(len(line)) + 1
		if c != nil {
			rec, err := c.open(line)
			if err != nil {
				// A torn last line (the process was killed mid-write)
				// is dropped, as below.
				if json.Valid(line) || sc.Scan() {
					return nil, &TamperedError{Path: path, Line: n, Reason: err.Error(), KeyFrom: c.key.From}
				}
				break
			}
			line = rec
		}
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil {
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
		l.size += size
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
	case r.Kind == "receipt" && r.Receipt == nil:
		return errors.New("a receipt record without its receipt")
	case r.Kind == "task" && len(r.Task) == 0:
		return errors.New("a task record without its task")
	case (r.Kind == "call_state" || r.Kind == "call_start" || r.Kind == "call_end" || r.Kind == "call_stopped") && r.CallID == "":
		return fmt.Errorf("a %s record without its call id", r.Kind)
	case r.Kind == "call_end" && r.Result == nil:
		return errors.New("a call_end record without its result")
	}
	return nil
}

func (l *Loaded) apply(rec record) {
	switch rec.Kind {
	case "header":
		l.Header = *rec.Header
	case "message":
		st := &l.State
		if rec.Frame != "" {
			if l.Frames[rec.Frame] == nil {
				l.Frames[rec.Frame] = &exec.State{}
			}
			st = l.Frames[rec.Frame]
		}
		st.Messages = append(st.Messages, *rec.Message)
		st.Iterations = rec.Iterations
		if rec.Usage != nil {
			st.Usage = *rec.Usage
		}
		if len(rec.ModelState) > 0 {
			if rec.Frame == "" {
				l.ModelState = rec.ModelState
			}
			l.ModelStates[ModelKey(rec.Frame, rec.Message.Agent)] = rec.ModelState
		}
		l.Status = ""
	case "receipt":
		l.Receipts = append(l.Receipts, *rec.Receipt)
	case "task":
		var t struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(rec.Task, &t)
		if i, ok := l.taskIndex[t.ID]; ok {
			l.Tasks[i] = rec.Task
		} else {
			l.taskIndex[t.ID] = len(l.Tasks)
			l.Tasks = append(l.Tasks, rec.Task)
		}
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
		if l.AnswerIDs[rec.CallID] == nil {
			l.AnswerIDs[rec.CallID] = map[int]string{}
		}
		l.AnswerIDs[rec.CallID][rec.Index] = rec.PromptID
	case "secret":
		l.Secrets = append(l.Secrets, *rec.Secret)
	case "approval":
		if rec.Key != "" {
			l.ToolApprovals = append(l.ToolApprovals, rec.Key)
		} else {
			l.Approvals = append(l.Approvals, rec.Command)
		}
	case "call_state":
		if len(rec.CallState) == 0 || string(rec.CallState) == "null" {
			delete(l.CallStates, rec.CallID)
		} else {
			l.CallStates[rec.CallID] = rec.CallState
		}
	case "call_start":
		l.Acted[rec.CallID] = nil
	case "call_end":
		l.Acted[rec.CallID] = rec.Result
	case "call_stopped":
		delete(l.Acted, rec.CallID)
	case "end":
		l.Status = rec.Status
	}
}

// ModelKey names the model state of agent in frame.
func ModelKey(frame, agent string) string { return frame + "\x00" + agent }

// Pending are the calls without a result in every conversation of the
// run: the run's own and its agents' (the ones a resume continues).
func (l *Loaded) Pending(root []exec.Message) []exec.ToolCall {
	calls := exec.PendingCalls(root)
	for _, st := range l.Frames {
		calls = append(calls, exec.PendingCalls(st.Messages)...)
	}
	return calls
}

func promptNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "p"))
	return n
}

// endWhole makes f end with the whole records read (size bytes, counting a
// newline after each): a torn last line is cut off; a last record whose
// newline was lost gets it back.
func endWhole(f *os.File, size int64) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	switch {
	case fi.Size() > size:
		return f.Truncate(size)
	case fi.Size() == size-1:
		_, err = f.WriteAt([]byte("\n"), size-1)
		return err
	}
	return nil
}
