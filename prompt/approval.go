package prompt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Questioner asks a canonical question (an *Asker): what a tool that asks
// for approval needs.
type Questioner interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// An approval is a canonical question (DESIGN §4): "run this?" with the
// options once / session / no, of consent kind ConsentApproval.

// Approval is a person's answer to "run this?".
type Approval struct {
	Approved bool
	// Session: approved for the rest of the run.
	Session bool
	// Person: a person approved it (Source.Person), not a hook. Only a
	// command a person approved receives the secrets (rule.go).
	Person bool
	// Refusal is the error result for the model when not approved.
	Refusal string
}

// The option ids of an approval question.
const (
	ApproveOnce    = "once"
	ApproveSession = "session"
	ApproveNo      = "no"
)

// NobodyToApprove is what the model is told when nobody could approve.
const NobodyToApprove = "no one was available to approve; allow it in permissions or run with --yolo"

// ApprovalQuestion makes the consent question for a call: a choice of
// once / session (when session is true) / no, defaulting to hitl's "no",
// of kind ConsentApproval (never defaulted, never replayed; nobody to ask
// stops the run under --unanswered stop). Free text is taken as a refusal
// with feedback.
func ApprovalQuestion(message string, session bool) Question {
	opts := []Option{{ID: ApproveOnce, Label: "Yes, once"}}
	if session {
		opts = append(opts, Option{ID: ApproveSession, Label: "Yes, for this session"})
	}
	opts = append(opts, Option{ID: ApproveNo, Label: "No"})
	ids := make([]string, len(opts))
	for i, o := range opts {
		ids[i] = o.ID
	}
	schema, _ := json.Marshal(map[string]any{"type": "string", "enum": ids})
	return Question{
		Kind:    KindChoice,
		Message: message,
		Options: opts,
		Custom:  true,
		Default: json.RawMessage(`"no"`),
		Schema:  schema,
		// Never defaulted nor replayed: a command interrupted before its
		// result (Ctrl-C) runs again on resume only if a person approves
		// it again.
		Consent: ConsentApproval,
	}
}

// AskApproval asks q (from ApprovalQuestion) and interprets the answer. what
// names the thing approved in refusals ("command", "call"). Errors are the
// asker's (an interrupt, a bad answer line): they stop the run.
func AskApproval(ctx context.Context, asker Questioner, q Question, what string) (Approval, error) {
	if asker == nil {
		return Approval{Refusal: fmt.Sprintf("the %s was not run: it was not approved: %s", what, NobodyToApprove)}, nil
	}
	ans, err := asker.Ask(ctx, q)
	if err != nil {
		return Approval{}, err
	}
	if ans.Unanswered() {
		return Approval{Refusal: fmt.Sprintf("the %s was not run: it was not approved: %s", what, NobodyToApprove)}, nil
	}
	return ApprovalOf(ans, what), nil
}

// ApprovalOf interprets an answer someone gave to an approval question
// (ApprovalQuestion): only an accept naming "once" or "session" approves;
// free text is a refusal with feedback. The caller handles an answer
// nobody gave (Answer.Unanswered).
func ApprovalOf(ans Answer, what string) Approval {
	refused := fmt.Sprintf("the user did not approve this %s; it was not run", what)
	if ans.Action != Accept || ans.Unanswered() {
		return Approval{Refusal: refused}
	}
	if text := strings.TrimSpace(ans.Text); text != "" {
		return Approval{Refusal: refused + ". The user said: " + text}
	}
	var id string
	_ = json.Unmarshal(ans.Content, &id)
	switch id {
	case ApproveOnce:
		return Approval{Approved: true, Person: ans.Source.Person()}
	case ApproveSession:
		return Approval{Approved: true, Session: true, Person: ans.Source.Person()}
	}
	return Approval{Refusal: refused}
}
