package permissions

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hitl-dev/hitl/prompt"
)

// Asker asks a canonical question (prompt.Asker).
type Asker interface {
	Ask(ctx context.Context, q prompt.Question) (prompt.Answer, error)
}

// Approval is a person's answer to "run this?".
type Approval struct {
	Approved bool
	// Session: approved for the rest of the run.
	Session bool
	// Refusal is the error result for the model when not approved.
	Refusal string
}

// The option ids of an approval question.
const (
	Once    = "once"
	Session = "session"
	No      = "no"
)

// Nobody is what the model is told when nobody could approve.
const Nobody = "no one was available to approve; allow it in permissions or run with --yolo"

// ApprovalQuestion makes the consent question for a call: a choice of
// once / session (when session is true) / no, defaulting to no, never
// defaulted and never stopping the run when unanswered. Free text is taken
// as a refusal with feedback.
func ApprovalQuestion(message string, session bool) prompt.Question {
	opts := []prompt.Option{{ID: Once, Label: "Yes, once"}}
	if session {
		opts = append(opts, prompt.Option{ID: Session, Label: "Yes, for this session"})
	}
	opts = append(opts, prompt.Option{ID: No, Label: "No"})
	ids := make([]string, len(opts))
	for i, o := range opts {
		ids[i] = o.ID
	}
	schema, _ := json.Marshal(map[string]any{"type": "string", "enum": ids})
	return prompt.Question{
		Kind:    prompt.KindChoice,
		Message: message,
		Options: opts,
		Custom:  true,
		Default: json.RawMessage(`"no"`),
		Schema:  schema,
		// Never defaulted nor replayed: a command interrupted before its
		// result (Ctrl-C) runs again on resume only if a person approves
		// it again.
		Consent: prompt.ConsentApproval,
	}
}

// AskApproval asks q (from ApprovalQuestion) and interprets the answer. what
// names the thing approved in refusals ("command", "call"). Errors are the
// asker's (an interrupt, a bad answer line): they stop the run.
func AskApproval(ctx context.Context, asker Asker, q prompt.Question, what string) (Approval, error) {
	if asker == nil {
		return Approval{Refusal: fmt.Sprintf("the %s was not run: it was not approved: %s", what, Nobody)}, nil
	}
	ans, err := asker.Ask(ctx, q)
	if err != nil {
		return Approval{}, err
	}
	if ans.Unanswered() {
		return Approval{Refusal: fmt.Sprintf("the %s was not run: it was not approved: %s", what, Nobody)}, nil
	}
	refused := fmt.Sprintf("the user did not approve this %s; it was not run", what)
	if ans.Action != prompt.Accept {
		return Approval{Refusal: refused}, nil
	}
	if text := strings.TrimSpace(ans.Text); text != "" {
		return Approval{Refusal: refused + ". The user said: " + text}, nil
	}
	var id string
	_ = json.Unmarshal(ans.Content, &id)
	switch id {
	case Once:
		return Approval{Approved: true}, nil
	case Session:
		return Approval{Approved: true, Session: true}, nil
	}
	return Approval{Refusal: refused}, nil
}
