package exec

import (
	"encoding/json"
	"time"

	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/approver"
)

// Event is one thing that happened in a run (DESIGN §3). Each type below is
// marshalled as one JSONL line with "type" and "time".
type Event interface {
	header() *Header
}

// Header is the part every event has.
type Header struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
}

func (h *Header) header() *Header { return h }

// Stamp sets the event's type and time.
func Stamp(e Event, typ string, now time.Time) Event {
	h := e.header()
	h.Type, h.Time = typ, now
	return e
}

// Sink receives the events of a run as they happen.
type Sink interface {
	Emit(Event)
}

type RunStarted struct {
	Header
	RunID   string `json:"run_id"`
	Agent   string `json:"agent"`
	Model   string `json:"model"`
	Session string `json:"session,omitempty"`
	// Sandbox is what confines the run's children: bwrap, landlock, none.
	Sandbox string `json:"sandbox,omitempty"`
}

type MessageEvent struct {
	Header
	Role string `json:"role"`
	Text string `json:"text"`
	// Agent is the agent that wrote it; TaskID its background task.
	Agent  string `json:"agent,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	// Final marks the turn that ended the run (no tool calls); not part of
	// the JSON contract, used by the human renderer.
	Final bool `json:"-"`
}

type ToolCallEvent struct {
	Header
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Server is the MCP server of the tool ("" for other tools).
	Server string `json:"server,omitempty"`
	Agent  string `json:"agent,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	// Asks is set when the tool asks a person (Asking): its arguments
	// are the question. Not part of the JSON event.
	Asks bool `json:"-"`
}

type ToolResultEvent struct {
	Header
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Result  string `json:"result"`
	IsError bool   `json:"is_error"`
	Agent   string `json:"agent,omitempty"`
	TaskID  string `json:"task_id,omitempty"`
}

type PromptRequest struct {
	Header
	prompt.Question
	// IsConsent says the answer can grant something (DESIGN §4): it is
	// never defaulted, never answered by an index, and an answers-file
	// entry must name it.
	IsConsent bool `json:"consent"`
}

type PromptAnswer struct {
	Header
	PromptID string          `json:"prompt_id"`
	Action   prompt.Action   `json:"action"`
	Content  json.RawMessage `json:"content,omitempty"`
	Text     string          `json:"text,omitempty"`
	Source   prompt.Source   `json:"source"`
	// Approver is who answered, for an approver's answer.
	Approver string `json:"approver,omitempty"`
}

type ErrorEvent struct {
	Header
	Message  string `json:"message"`
	Line     int    `json:"line,omitempty"`
	PromptID string `json:"prompt_id,omitempty"`
}

type RunFinished struct {
	Header
	Status          Status `json:"status"`
	ExitCode        int    `json:"exit_code"`
	Text            string `json:"text"`
	Iterations      int    `json:"iterations"`
	Usage           Usage  `json:"usage"`
	DurationMS      int64  `json:"duration_ms"`
	Error           string `json:"error,omitempty"`
	Session         string `json:"session,omitempty"`
	PendingPromptID string `json:"pending_prompt_id,omitempty"`
	// Output is the final answer as JSON, for an agent with a
	// structured_output (DESIGN §11).
	Output json.RawMessage `json:"output,omitempty"`
	// Interrupts are the questions a stopped run waits on, in AG-UI's
	// interrupt shape (DESIGN §14); a resume document answers them.
	Interrupts []approver.Interrupt `json:"interrupts,omitempty"`
}
