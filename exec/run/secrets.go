package run

import (
	"context"
	"fmt"
	"io"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/prompt"
)

// A run's secrets (DESIGN §5): the values live in the run's prompt.Secrets
// (placeholders, the environment of shell commands, masking), the journal
// records which question each placeholder answered but never its value,
// and a resumed run reserves the placeholders the model already holds and
// asks their questions again.

// reserveLostSecrets keeps the placeholders of secrets answered before the
// run stopped from naming a secret asked after the resume: a command
// written for one must never get another.
func reserveLostSecrets(secrets *prompt.Secrets, msgs []exec.Message) {
	lost := 0
	for _, m := range msgs {
		if m.Role == exec.RoleTool {
			lost = max(lost, prompt.MaxPlaceholder(m.Text))
		}
	}
	secrets.Reserve(lost)
}

// reaskSecrets asks again, before a resumed run goes on, the secret
// questions answered before it stopped (a session never keeps their
// values), so $HITL_SECRET_<n> means in this run what it meant to the
// model. They are asked under ids s<n>. Only a secret whose placeholder
// is in its call's result is asked: the model never saw the others (the
// pending calls run again and ask anew; a call cut off by a second Ctrl-C
// after its answer left a record whose number may since name another
// secret).
func reaskSecrets(ctx context.Context, asker *prompt.Asker, loaded *session.Loaded, msgs []exec.Message, notices io.Writer) error {
	results := map[string]string{}
	for _, m := range msgs {
		if m.Role == exec.RoleTool {
			results[m.ToolCallID] = m.Text
		}
	}
	seen := map[int]bool{}
	for _, sq := range loaded.Secrets {
		if seen[sq.N] || !prompt.HasPlaceholder(results[sq.Question.CallID], sq.N) {
			continue
		}
		seen[sq.N] = true
		q := sq.Question
		q.ID, q.SecretSlot, q.Index, q.Count = fmt.Sprintf("s%d", sq.N), sq.N, 0, 1
		again := fmt.Sprintf("asked again after the resume: secret answers are never kept in a session (this is HITL_SECRET_%d)", sq.N)
		if q.Hint == "" {
			q.Hint = again
		} else {
			// the schema's description may be all that says which secret
			q.Hint += " (" + again + ")"
		}
		ans, err := asker.Ask(ctx, q)
		if err != nil {
			return err
		}
		if ans.Action != prompt.Accept && notices != nil {
			why := "the question was dismissed"
			switch {
			case ans.Unanswered():
				why = "nobody answered"
			case ans.Action == prompt.Decline:
				why = "the question was declined"
			}
			fmt.Fprintf(notices, "hitl: HITL_SECRET_%d stays unset in this run (%s)\n", sq.N, why)
		}
	}
	return nil
}
