// Package prompt holds the canonical question every ask-user dialect, shell
// approval and remote user_choice becomes, the answer it gets, and the front
// ends that obtain answers: the terminal (survey), JSONL on stdin, an answers
// file and the unanswered policy.
package prompt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Kind is the shape of a question.
type Kind string

const (
	KindText    Kind = "text"
	KindChoice  Kind = "choice"
	KindConfirm Kind = "confirm"
	KindForm    Kind = "form"
)

// Option is one choice of a choice question. ID is what an answer's content
// names; an option without an id uses its label as id.
type Option struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description"`
}

// Question is the canonical question (DESIGN §4).
type Question struct {
	ID     string `json:"prompt_id"`        // assigned by the Asker: p1, p2, ...
	CallID string `json:"call_id"`          // the tool call asking
	Tool   string `json:"tool"`             // the tool name the model called
	Server string `json:"server,omitempty"` // the MCP server of Tool ("" for built-in tools)
	Index  int    `json:"index"`            // position among the questions of one call
	Count  int    `json:"count"`

	Kind     Kind     `json:"kind"`
	Message  string   `json:"message"`
	Title    string   `json:"title"`
	Header   string   `json:"header"`
	Hint     string   `json:"hint"`
	Options  []Option `json:"options"`
	Multiple bool     `json:"multiple"`
	// Custom allows free text (Answer.Text) besides the options.
	Custom  bool            `json:"custom"`
	Default json.RawMessage `json:"default"`
	Secret  bool            `json:"secret"`
	// Schema is the JSON Schema that an accepted answer's content satisfies.
	Schema json.RawMessage `json:"schema"`
	// Agent is the agent whose tool asks, TaskID its background task
	// (DESIGN §13); the Asker sets them from the context (WithAgent).
	Agent  string `json:"agent,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	// Member: a sub-agent, a background agent or an agent handed off to
	// asks, not the agent the run started with; front ends name it.
	Member bool `json:"-"`
	// Subject is the whole text a consent question approves (a command
	// line, the call shown for approval); an answers-file entry answers a
	// consent question only when its match covers all of it (DESIGN §5).
	// Empty: the message.
	Subject string `json:"-"`
	// Fields are the properties of a form, asked one after another on a TTY.
	Fields []Field `json:"-"`

	// Consent says whether, and how, an answer to q can grant something
	// (DESIGN §4 "Consent questions"); its methods decide defaulting,
	// stopping, replay and preselection.
	Consent Consent `json:"-"`
	// Dir is the directory an approved command runs in (a shell
	// approval): an answers-file entry binds it (DESIGN §5).
	Dir string `json:"-"`
	// PersonOnly: what an allow rule may not approve (a call that hands
	// over a secret, a program no sandbox confines) a program of the agent
	// file (a permission_request hook) may not approve either.
	PersonOnly bool `json:"-"`
	// HandsSecret: what is approved hands over a secret (a placeholder in
	// a call's arguments or a command line); it makes the question
	// PersonOnly, and says why.
	HandsSecret bool `json:"-"`
	// ModelDefault: the model wrote the default (a user_prompt schema's
	// default): it never answers the question (DESIGN §1.12, §5), though a
	// terminal still shows it to a person.
	ModelDefault bool `json:"-"`
	// AcceptAlone: an accept with no content answers yes (a URL
	// elicitation: {"action":"accept"} says the page was opened and done,
	// DESIGN §10). Only a confirm question takes it.
	AcceptAlone bool `json:"-"`
	// SecretSlot, on a secret asked again after a resume, is the number of
	// the placeholder the model already holds for it.
	SecretSlot int `json:"-"`
}

// Field is one property of a form question.
type Field struct {
	Name     string
	Required bool
	Question Question // Kind, Message, Options, Default, Secret, Schema of the field
}

// Action is what the person did with a question.
type Action string

const (
	Accept  Action = "accept"
	Decline Action = "decline"
	Cancel  Action = "cancel"
)

// Source says where an answer came from (the prompt.answer event's source).
type Source string

const (
	SourceTTY     Source = "tty"
	SourceJSONL   Source = "jsonl"
	SourceAnswers Source = "answers"
	SourceDefault Source = "default"
	SourcePolicy  Source = "policy"
	SourceTimeout Source = "timeout"
	SourceEOF     Source = "eof"
	// SourceSession is an answer given before the run stopped, replayed from
	// the session journal on resume.
	SourceSession Source = "session"
	// SourceApprover: an approver program or webhook (DESIGN §14).
	SourceApprover Source = "approver"
	// SourceHook: a permission_request hook of the agent file.
	SourceHook Source = "hook"
)

// Answer is the answer to one question. Content is set when Action is Accept
// and no free text was given; Text holds free text.
type Answer struct {
	Action  Action          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
	Text    string          `json:"text,omitempty"`
	Source  Source          `json:"source"`
	// Approver is who answered, for an approver's answer: the identity
	// it gave, and the program or URL it came through.
	Approver string `json:"approver,omitempty"`
}

// FrontEnd obtains an answer to one question, from a person or a script.
// It returns ErrUnanswered (wrapped) when nobody answered (end of input, no
// terminal, timeout), and other errors for failures that must stop the run
// (a bad answer line, an interrupt).
type FrontEnd interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// ErrUnanswered means no answer could be obtained from a front end.
var ErrUnanswered = errors.New("no answer")

// UnansweredError says why a question got no answer; it wraps ErrUnanswered.
type UnansweredError struct {
	Source Source // eof, timeout, policy
	Reason string
}

func (e *UnansweredError) Error() string { return e.Reason }
func (e *UnansweredError) Unwrap() error { return ErrUnanswered }

// BadAnswerError is an answer line (or answers file entry) that cannot be
// used; it ends the run with exit 2.
type BadAnswerError struct {
	Where    string // "answer line 3", "answers.yaml:4:3"
	Line     int    // the answer line number, 0 when not from a line
	PromptID string
	Reason   string
}

func (e *BadAnswerError) Error() string { return fmt.Sprintf("%s: %s", e.Where, e.Reason) }

// StopError ends the run with status input_required: a question was not
// answered and the policy is stop. Question is the pending one.
type StopError struct {
	Question Question
	Reason   string // why nobody answered (end of input, timeout)
}

func (e *StopError) Error() string {
	return fmt.Sprintf("input required: question %s was not answered (%s)", e.Question.ID, e.Reason)
}

// ErrInterrupted is a person pressing Ctrl-C at a prompt.
var ErrInterrupted = errors.New("interrupted at a prompt")
