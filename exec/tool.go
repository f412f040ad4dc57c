package exec

import (
	"context"
	"encoding/json"
)

// Tool is something the model can call.
type Tool interface {
	Spec() ToolSpec
	Call(ctx context.Context, call ToolCall) (Result, error)
}

// Asking is a tool whose calls ask a person: the question is made of the
// call's arguments (user_prompt, ask_user, AskUserQuestion). Its tool.call
// event says so (ToolCallEvent.Asks), so a front end that draws the
// question need not show the arguments as well.
type Asking interface {
	Tool
	AsksPerson() bool
}

// Result is what a tool call gives back to the model. An error returned by
// Tool.Call (rather than a Result with IsError) is not for the model: it stops
// the run (infrastructure failure, a bad answer line, an unanswered question).
type Result struct {
	Text    string
	IsError bool
	// End, when set, ends the run after this call with the given outcome
	// (verdict, a cancelled AskUserQuestion). Later calls of the turn are not
	// run.
	End *Outcome
	// Handoff, when set, is the agent the conversation goes on with after
	// this call (DESIGN §13): the runner takes its instruction, model and
	// tools (Runner.OnHandoff). Later calls of the turn are not run: they
	// were the other agent's.
	Handoff string
}

// Status is how a run ended, as reported in run.finished.
type Status string

const (
	StatusSuccess       Status = "success"
	StatusRejected      Status = "rejected"
	StatusCancelled     Status = "cancelled"
	StatusInputRequired Status = "input_required"
	StatusError         Status = "error"
	StatusInterrupted   Status = "interrupted"
)

// Outcome is how a run ended: the status and the text reported with it.
type Outcome struct {
	Status Status
	Text   string
	// Output is the final answer as JSON, when the agent has a
	// structured_output it fits.
	Output json.RawMessage
}

// Acting is a tool some of whose calls act on the world (write a file, run
// a destructive MCP tool, fetch a URL): such a call needs a person's
// approval unless a permissions rule allows it. The run's gate applies the
// rules and asks; the tool only says whether a call acts and what a person
// must see to decide.
type Acting interface {
	Tool
	// Approval reports whether call needs approval (ok) and what to show.
	// ok false: the call only reads, and runs without asking unless an ask
	// rule names it (Args and Server, when set, are still what rules
	// judge). An error is for the model (bad arguments), as an
	// error result.
	Approval(ctx context.Context, call ToolCall) (a Approval, ok bool, err error)
}

// Approval is what a person approves for one acting call.
type Approval struct {
	// Args are the call's arguments as permission rules match them
	// (write_file:path=docs/*, fetch:urls=https://x/*).
	Args map[string]any
	// Show is what is approved, as a person reads it: a unified diff, a
	// URL, an MCP call's arguments. The front end escapes and shortens it.
	Show string
	// Server is the MCP server of the tool ("" for built-in tools).
	Server string
	// SessionKey, when set, lets a person approve "for this session": a
	// later call with the same key runs without asking. Empty: only
	// "once" or "no" are offered.
	SessionKey string
	// Secret: the call hands a secret's value to someone (the tool
	// substitutes a secret placeholder of its arguments). A person
	// approves every such call: no allow rule and no approval for the
	// session lets it run unasked (deny rules and --yolo apply as ever).
	Secret bool
	// Parts are what the model set of an HTTP request, as rules name them
	// (path, query, header.NAME, cookie.NAME, body): an allow rule with
	// arguments admits the call only when it judges each (url judges path
	// and query); otherwise a person is asked.
	Parts []string
	// Unconfined: the call runs a program that no sandbox confines (the
	// machine has none, DESIGN §12). Like Secret, a person approves every
	// such call: no allow rule and no approval for the session lets it run
	// unasked.
	Unconfined bool
	// Hidden, when set, names what the call reads or changes that is
	// hidden from what runs unasked, and what hides it ("secrets/key, in
	// /work/secrets (permissions.deny_read)"; DESIGN §15): like Secret, a person
	// approves every such call: no allow rule and no approval for the
	// session lets it run unasked.
	Hidden string
}
