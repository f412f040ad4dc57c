// Package tty is the terminal front end: it asks canonical questions with
// survey prompts (Select, MultiSelect, Input, Password, Confirm) on a
// terminal, escapes every piece of model text it draws, and turns Esc and
// Ctrl-D into a dismissal and Ctrl-C into an interrupt (DESIGN §4 "On a TTY").
// It is the only package that imports survey.
package tty

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/AlecAivazis/survey/v2"
	"github.com/AlecAivazis/survey/v2/core"
	"github.com/AlecAivazis/survey/v2/terminal"
	"github.com/hitl-dev/hitl/prompt"
)

// FrontEnd asks questions on a terminal. It implements prompt.FrontEnd.
type FrontEnd struct {
	out  fdWriter
	keys *keySource
	turn chan struct{} // holds a token while a question is on the terminal
}

// New returns a front end that reads keys from in and draws on out; both
// are usually the same terminal (stdin and stderr, or /dev/tty). NO_COLOR in
// the environment turns survey's colours off.
func New(in, out *os.File) *FrontEnd {
	if os.Getenv("NO_COLOR") != "" {
		core.DisableColor = true
	}
	return &FrontEnd{out: fdWriter{f: out, fd: rawFd(out)}, keys: newKeySource(in), turn: make(chan struct{}, 1)}
}

// errDismissed is a question dismissed with Esc or Ctrl-D.
var errDismissed = errors.New("dismissed")

// Ask asks q until the person gives an answer that passes prompt.Check,
// dismisses it (action cancel) or presses Ctrl-C (prompt.ErrInterrupted).
// When ctx ends the prompt is taken down, the terminal restored, and the
// context's cause returned.
func (f *FrontEnd) Ask(ctx context.Context, q prompt.Question) (prompt.Answer, error) {
	// One question at a time on one terminal; waiting for the turn ends
	// with ctx.
	select {
	case f.turn <- struct{}{}:
		defer func() { <-f.turn }()
	case <-ctx.Done():
		return prompt.Answer{}, context.Cause(ctx)
	}
	if ctx.Err() != nil {
		return prompt.Answer{}, context.Cause(ctx)
	}
	f.keys.start()
	f.keys.discardPending()
	s := &session{ctx: ctx, in: &keyReader{ctx: ctx, src: f.keys}, out: f.out}
	var (
		ans prompt.Answer
		err error
	)
	if q.Kind == prompt.KindForm {
		ans, err = s.form(q)
	} else {
		ans, err = s.question(q, []string{dismissTag}, consent(q, q))
	}
	if errors.Is(err, errDismissed) {
		s.note("dismissed")
		return prompt.Answer{Action: prompt.Cancel, Source: prompt.SourceTTY}, nil
	}
	if err != nil {
		return prompt.Answer{}, err
	}
	ans.Source = prompt.SourceTTY
	return ans, nil
}

// session is one question being asked: its key reader (one per question, so
// a dismissal is remembered for it alone) and where it draws.
type session struct {
	ctx context.Context
	in  *keyReader
	out fdWriter
}

// capture receives survey's answer as survey produced it (core.OptionAnswer,
// []core.OptionAnswer, string or bool).
type capture struct{ v any }

func (c *capture) WriteAnswer(_ string, v any) error {
	c.v = v
	return nil
}

// run asks one survey prompt. validate (optional) gets survey's answer and
// returns the reason it must be asked again; done is called with the valid
// answer before survey draws its summary line (to shorten the message).
func (s *session) run(p survey.Prompt, validate func(any) error, done func()) (any, error) {
	var c capture
	q := &survey.Question{Name: "answer", Prompt: p}
	if validate != nil {
		q.Validate = validate
	}
	if done != nil {
		q.Transform = func(any) any { done(); return nil }
	}
	err := survey.Ask([]*survey.Question{q}, &c,
		survey.WithStdio(s.in, s.out, s.out),
		survey.WithShowCursor(true),
		survey.WithPageSize(pageSize),
	)
	if err != nil {
		return nil, s.mapErr(err)
	}
	return c.v, nil
}

const pageSize = 10

// mapErr says what ended a prompt early.
func (s *session) mapErr(err error) error {
	switch {
	case s.ctx.Err() != nil:
		// --prompt-timeout or a signal: the Asker tells them apart by
		// the cause.
		s.note("no answer")
		return context.Cause(s.ctx)
	case errors.Is(err, terminal.InterruptErr) && s.in.dismissed:
		return errDismissed
	case errors.Is(err, terminal.InterruptErr):
		return prompt.ErrInterrupted
	case errors.Is(err, io.EOF):
		return &prompt.UnansweredError{Source: prompt.SourceEOF, Reason: "the terminal was closed"}
	}
	return fmt.Errorf("asking on the terminal: %w", err)
}

// note ends a prompt that got no answer with a line saying so, so the next
// output starts on a clean line.
func (s *session) note(what string) {
	fmt.Fprintf(s.out, "\r\x1b[K  (%s)\r\n", what)
}
