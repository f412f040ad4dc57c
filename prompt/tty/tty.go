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
	"strings"
	"time"

	"github.com/AlecAivazis/survey/v2"
	"github.com/AlecAivazis/survey/v2/core"
	"github.com/AlecAivazis/survey/v2/terminal"
	"github.com/hitl-dev/hitl/prompt"
)

// FrontEnd asks questions on a terminal. It implements prompt.FrontEnd.
type FrontEnd struct {
	out  fdWriter
	keys *keySource
	mode *termMode     // the terminal's modes as found; nil if not a terminal
	turn chan struct{} // holds a token while a question is on the terminal
}

// consentHold is how long a consent question takes no key once drawn
// (DESIGN §4), as browsers' permission dialogs do. A variable only so that
// a test on a loaded machine can make it long enough to type into.
var consentHold = 300 * time.Millisecond

// New returns a front end that reads keys from in and draws on out; both
// are usually the same terminal (stdin and stderr, or /dev/tty). NO_COLOR in
// the environment turns survey's colours off.
//
// From now until Close the front end owns in: its key reader starts at once
// and drops every key typed while no question is on the screen, and the
// terminal does not echo them (DESIGN §4 "Type-ahead never answers"). Call
// Close when the run ends, on every path; RestoreTerminals before an
// os.Exit that skips it.
func New(in, out *os.File) *FrontEnd {
	if os.Getenv("NO_COLOR") != "" {
		core.DisableColor = true
	}
	fd := rawFd(in)
	mode := quiet(int(fd))
	return &FrontEnd{
		out:  fdWriter{f: out, fd: rawFd(out)},
		keys: newKeySource(in, mode == nil),
		mode: mode,
		turn: make(chan struct{}, 1),
	}
}

// Close puts the terminal's modes back as New found them. The key reader
// keeps reading in (dropping what it reads) until in is closed or the
// process ends. Close may be called more than once.
func (f *FrontEnd) Close() error {
	f.mode.restore()
	return nil
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
	// Whatever was typed before this question is dropped: in the
	// terminal, and in the key reader.
	flushInput(int(f.keys.fd))
	resetTerminal(f.out)
	f.keys.begin()
	defer f.keys.end()
	s := &session{ctx: ctx, in: &keyReader{ctx: ctx, src: f.keys}, out: f.out}
	s.rows, s.cols = terminalSize(f.out.fd)
	if isConsent(q) {
		s.in.hold = consentHold
	}
	var (
		ans prompt.Answer
		err error
	)
	if q.Kind == prompt.KindForm {
		ans, err = s.form(q)
	} else {
		ans, err = s.question(q, []string{dismissTag})
	}
	if errors.Is(err, errDismissed) {
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
	ctx        context.Context
	in         *keyReader
	out        fdWriter
	rows, cols int // the terminal's size; 0 when unknown
}

// capture receives survey's answer as survey produced it (core.OptionAnswer,
// []core.OptionAnswer, string or bool).
type capture struct{ v any }

func (c *capture) WriteAnswer(_ string, v any) error {
	c.v = v
	return nil
}

// run asks one survey prompt. validate (optional) gets survey's answer and
// returns the reason it must be asked again. summary replaces the prompt's
// message in the line survey leaves once the prompt is answered or ended.
func (s *session) run(p survey.Prompt, validate func(any) error, summary string) (v any, err error) {
	spy := &configSpy{inner: p}
	defer func() {
		// survey's text prompts go on without the cursor position when
		// reading the terminal's answer fails, and some keys read while
		// waiting for it make them dereference that missing position.
		// Once the keys have failed, that is the read failing, not a bug.
		if r := recover(); r != nil {
			if s.in.failed == nil {
				panic(r)
			}
			v, err = nil, s.mapErr(s.in.failed)
			if spy.config != nil {
				s.collapse(spy, summary, err)
			}
		}
	}()
	var c capture
	q := &survey.Question{Name: "answer", Prompt: spy, Validate: validate}
	q.Transform = func(any) any { setMessage(p, summary); return nil }
	// Keys typed before this prompt is drawn never reach it.
	mark := &drawMark{fdWriter: s.out}
	s.in.reset(mark)
	err = survey.Ask([]*survey.Question{q}, &c,
		survey.WithStdio(s.in, mark, s.out),
		survey.WithShowCursor(true),
		survey.WithPageSize(pageSize),
	)
	if err != nil {
		err = s.mapErr(err)
		if spy.config != nil {
			s.collapse(spy, summary, err)
		}
		return nil, err
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

// collapse redraws a prompt that ended without an answer as its summary
// line saying why, as survey does for an answer.
func (s *session) collapse(spy *configSpy, summary string, why error) {
	p, cfg := spy.inner, spy.config
	spy.forgetRefusal()
	label := "(no answer)"
	switch {
	case errors.Is(why, errDismissed):
		label = "(dismissed)"
	case errors.Is(why, prompt.ErrInterrupted):
		label = "(interrupted)"
	}
	interrupted := errors.Is(why, errDismissed) || errors.Is(why, prompt.ErrInterrupted)
	switch p.(type) {
	case *survey.Input, *yesNoPrompt, *secretPrompt:
		if interrupted {
			// survey's line reader went to the next line on the
			// interrupt: back to the prompt's line.
			fmt.Fprint(s.out, "\x1b[1A")
		}
	}
	setMessage(p, summary)
	var err error
	switch p := p.(type) {
	case *survey.Select:
		err = p.Cleanup(cfg, core.OptionAnswer{Value: label})
	case *survey.MultiSelect:
		err = p.Cleanup(cfg, []core.OptionAnswer{{Value: label}})
	case *survey.Input:
		err = p.Cleanup(cfg, label)
	case *yesNoPrompt:
		err = p.Render(survey.ConfirmQuestionTemplate, survey.ConfirmTemplateData{Confirm: p.Confirm, Answer: label, Config: cfg})
	case *secretPrompt:
		err = p.show(cfg, label)
	}
	if err != nil {
		fmt.Fprintf(s.out, "\r\n  %s\r\n", label)
	}
}

// setMessage sets the message a prompt draws.
func setMessage(p survey.Prompt, msg string) {
	switch p := p.(type) {
	case *survey.Select:
		p.Message = msg
	case *survey.MultiSelect:
		p.Message = msg
	case *survey.Input:
		p.Message = msg
	case *yesNoPrompt:
		p.Message = msg
	case *secretPrompt:
		p.Message = msg
	}
}

// configSpy passes a prompt to survey and keeps the configuration survey
// asks it with, to draw the prompt's summary line when it ends early. It
// also takes down the line survey draws above a prompt for a refused answer
// ("Sorry, your reply was invalid: …") once the prompt ends: survey leaves
// it on the screen above the answered question.
type configSpy struct {
	inner  survey.Prompt
	config *survey.PromptConfig
	// refusal is the refusal line survey drew last, as survey counts its
	// rows; "" when none is on the screen.
	refusal string
}

func (p *configSpy) Prompt(cfg *survey.PromptConfig) (any, error) {
	p.config = cfg
	return p.inner.Prompt(cfg)
}

func (p *configSpy) Cleanup(cfg *survey.PromptConfig, v any) error {
	p.forgetRefusal()
	return p.inner.Cleanup(cfg, v)
}

func (p *configSpy) Error(cfg *survey.PromptConfig, err error) error {
	if err := p.inner.Error(cfg, err); err != nil {
		return err
	}
	// survey draws the refusal right above the prompt it draws next and
	// never takes it down (a later refusal replaces it).
	_, layout, terr := core.RunTemplate(survey.ErrorTemplate, &survey.ErrorTemplateData{Error: err, Icon: cfg.Icons.Error})
	if terr == nil {
		p.refusal = strings.TrimSuffix(layout, "\n")
	}
	return nil
}

// forgetRefusal makes the refusal line part of what the prompt's next
// drawing replaces: survey's renderer takes down as many rows above the
// cursor as its drawn text holds, and the refusal's rows are right above
// the prompt's.
func (p *configSpy) forgetRefusal() {
	r, ok := p.inner.(interface{ AppendRenderedText(string) })
	if p.refusal == "" || !ok {
		return
	}
	r.AppendRenderedText("\n" + p.refusal)
	p.refusal = ""
}

func (p *configSpy) WithStdio(stdio terminal.Stdio) {
	if w, ok := p.inner.(interface{ WithStdio(terminal.Stdio) }); ok {
		w.WithStdio(stdio)
	}
}
