package run

import (
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// promptEvents turns questions and answers into prompt.request and
// prompt.answer events; a secret's content is never in them.
type promptEvents struct {
	sink exec.Sink
}

func (o *promptEvents) Requested(q prompt.Question) {
	if o.sink == nil {
		return
	}
	if q.Options == nil {
		q.Options = []prompt.Option{} // every field of DESIGN §3 is present
	}
	o.sink.Emit(exec.Stamp(&exec.PromptRequest{Question: q, IsConsent: q.Consent.IsConsent()}, "prompt.request", time.Now()))
}

func (o *promptEvents) Answered(q prompt.Question, a prompt.Answer) {
	if o.sink == nil {
		return
	}
	e := &exec.PromptAnswer{PromptID: q.ID, Action: a.Action, Content: a.Content, Text: a.Text, Source: a.Source, Approver: a.Approver}
	if q.Secret && len(a.Content) > 0 {
		e.Content = []byte(`"***"`)
	}
	o.sink.Emit(exec.Stamp(e, "prompt.answer", time.Now()))
}

// observers tells several observers of each question and answer.
type observers []prompt.Observer

func (o observers) Requested(q prompt.Question) {
	for _, x := range o {
		x.Requested(q)
	}
}

func (o observers) Answered(q prompt.Question, a prompt.Answer) {
	for _, x := range o {
		x.Answered(q, a)
	}
}
