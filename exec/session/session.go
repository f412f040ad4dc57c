// Package session keeps a run's journal: an append-only JSONL file with one
// record per step (message, question, answer, approval, a command's start
// and end), from which a stopped run is resumed. It holds the conversation,
// the answers of a pending call, the counters, and the agent file's path
// and SHA-256 — never expanded variables or secret values. Each record is
// written through (on disk and synced before the run takes its next step),
// so a run killed at any point (SIGKILL, an OOM kill, a dead CI runner)
// resumes from it without asking an answered question again or running a
// command that started a second time; the loop never rewrites a growing
// file.
//
// session.go holds the record format, writer.go the Journal that appends
// records, reader.go reading a journal back (Open), replay.go the answers
// it replays on resume.
package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/receipt"
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
	// Dir is the directory the run started in: where hitl resume finds
	// the agent file (AgentFile is relative to it).
	Dir string `json:"dir,omitempty"`
	// Command is the command Message ran, cut at its tool calls, when it
	// has any: a run stopped before they all ran runs them on resume.
	Command []config.Segment `json:"command,omitempty"`
}

// record is one line of the journal.
type record struct {
	Kind string `json:"kind"` // header, message, question, answer, secret, approval, call_state, call_start, call_end, call_stopped, sandbox, end

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
	// Key is an approval "for this session" of another acting tool
	// (exec.Approval.SessionKey: mcp:SERVER:TOOL, fetch origins).
	Key string `json:"key,omitempty"`

	// Secret is a secret question answered (never its value) and the
	// number of its placeholder, so a resumed run can ask it again.
	Secret *SecretQuestion `json:"secret,omitempty"`

	// CallState is what a tool keeps of its call CallID when the run
	// stops in the middle of it (kind call_state): an MCP server's request
	// state and the questions it waits on, never a secret value. Empty: the
	// call keeps nothing (any earlier state of it is forgotten).
	CallState json.RawMessage `json:"call_state,omitempty"`

	Status exec.Status `json:"status,omitempty"`

	// Sandbox is what confined the run's children (kind sandbox: bwrap,
	// landlock, none), recorded when the run (or a resume) starts.
	Sandbox string `json:"sandbox,omitempty"`

	// Frame, on a message, is the conversation it belongs to: "" for the
	// run's, else the id of the call that started a sub-agent or a
	// background agent (DESIGN §13).
	Frame string `json:"frame,omitempty"`
	// Task is a background task's start or end (kind task), as the team
	// package writes it.
	Task json.RawMessage `json:"task,omitempty"`
	// Receipt is who approved what (kind receipt, DESIGN §14).
	Receipt *receipt.Signed `json:"receipt,omitempty"`
	// Result is what a call that acted returned (kind call_end); kind
	// call_start records that call CallID was about to act.
	Result *CallResult `json:"result,omitempty"`
}

// CallResult is the result of a call that acted, as the journal keeps it.
type CallResult struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error,omitempty"`
}

// Stateful is a model whose position must survive a resume (the script
// model).
type Stateful interface {
	State() json.RawMessage
	Restore(json.RawMessage) error
}

// ErrInUse is a session another hitl process is running or resuming.
var ErrInUse = errors.New("the session is in use by another hitl process")

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
