package run

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// Ask is the small run of hitl ask: one question, no model, no session, no
// secrets kept (the answer is for the calling script). The answers file,
// then the front end are tried; nobody answering stops (exit 4). sink gets
// the prompt.* events (a person answering on stdin sees the question
// there); notices, what a person must know (an answers-file entry passed
// over). It returns the answer and the question as asked (with its id).
func Ask(ctx context.Context, p Prompting, sink exec.Sink, notices io.Writer, q prompt.Question) (prompt.Answer, prompt.Question, error) {
	a := &prompt.Asker{
		FrontEnd:   p.FrontEnd,
		NoFrontEnd: p.NoFrontEnd,
		Timeout:    p.Timeout,
		Unanswered: p.Unanswered,
		Observer:   &promptEvents{sink: sink},
	}
	if p.Answers != nil {
		if notices != nil {
			p.Answers.Bind("", func(msg string) { fmt.Fprintf(notices, "hitl: %s\n", msg) })
		}
		a.Sources = append(a.Sources, p.Answers)
	}
	if sink != nil {
		a.OnBadAnswer = func(b *prompt.BadAnswerError) {
			sink.Emit(exec.Stamp(&exec.ErrorEvent{Message: b.Error(), Line: b.Line, PromptID: b.PromptID}, "error", time.Now()))
		}
	}
	if a.Unanswered == "" {
		a.Unanswered = prompt.UnansweredStop
	}
	ans, err := a.Ask(ctx, q)
	if q.ID == "" {
		// Asked under the next id; a question with its own (hitl ask
		// --request) keeps it.
		q.ID = fmt.Sprintf("p%d", a.Next())
	}
	return ans, q, err
}
