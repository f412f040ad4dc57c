package cmd

import (
	"io"
	"os"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/spf13/pflag"
)

// PromptOptions are the flags that decide how questions are answered; exec,
// resume and ask share them.
type PromptOptions struct {
	Prompt        string
	Answers       string
	Unanswered    string
	PromptTimeout time.Duration
}

func (o *PromptOptions) addFlags(f *pflag.FlagSet, withUnanswered bool) {
	f.StringVar(&o.Prompt, "prompt", "", "how questions are asked, `MODE`: auto, tty, jsonl or none (default auto; env HITL_PROMPT)")
	f.StringVar(&o.Answers, "answers", "", "scripted answers `FILE` (YAML or JSONL), consulted before the front end")
	if withUnanswered {
		f.StringVar(&o.Unanswered, "unanswered", "stop", "what a question nobody answers becomes, `POLICY`: stop, cancel or default")
	}
	f.DurationVar(&o.PromptTimeout, "prompt-timeout", 0, "a question unanswered for `DURATION` (e.g. 5m) is unanswered (0 = no limit)")
}

// promptMode resolves --prompt: the flag, else HITL_PROMPT, else jsonl when
// --json, else auto.
func promptMode(ios *IOStreams, flag string, jsonOut bool) (string, error) {
	mode := flag
	if mode == "" {
		mode = ios.Getenv("HITL_PROMPT")
	}
	if mode == "" && jsonOut {
		mode = "jsonl"
	}
	if mode == "" {
		mode = "auto"
	}
	switch mode {
	case "auto":
		if ios.CanPrompt() {
			return "tty", nil
		}
		return "jsonl", nil
	case "tty", "jsonl", "none":
		return mode, nil
	}
	return "", usagef("--prompt %q: expected auto, tty, jsonl or none", mode)
}

// NewTTYFrontEnd makes the terminal front end on in (read) and out (draw).
// It is set by the prompt/tty package's registration in tty.go.
var NewTTYFrontEnd func(in, out *os.File) (prompt.FrontEnd, error)

// frontEnd builds the front end of mode. closer releases /dev/tty.
func frontEnd(ios *IOStreams, mode string, notice io.Writer) (fe prompt.FrontEnd, closer func(), err error) {
	closer = func() {}
	switch mode {
	case "none":
		return nil, closer, nil
	case "jsonl":
		j := prompt.NewJSONL(ios.In)
		j.Notice = notice
		return j, closer, nil
	}
	// tty: stdin when it is a terminal, else /dev/tty (the git-hook case).
	in, out := ios.TTYIn, ios.TTYOut
	if in == nil || !ios.IsStdinTTY() || !ios.IsStderrTTY() {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return nil, closer, usagef("--prompt tty: no terminal to ask on (%v); use --prompt jsonl and pipe answers, or --answers", err)
		}
		in, out = tty, tty
		closer = func() { tty.Close() }
	}
	if NewTTYFrontEnd == nil {
		return nil, closer, usagef("--prompt tty: this build has no terminal front end")
	}
	fe, err = NewTTYFrontEnd(in, out)
	if c, ok := fe.(io.Closer); ok && err == nil {
		// The front end owns the terminal's modes from now on (no echo
		// between questions): put them back before /dev/tty is closed.
		release := closer
		closer = func() { c.Close(); release() }
	}
	return fe, closer, err
}

// promptObserver turns questions and answers into events.
type promptObserver struct {
	sink exec.Sink
}

func (o *promptObserver) Requested(q prompt.Question) {
	if q.Options == nil {
		q.Options = []prompt.Option{} // every field of DESIGN §3 is present
	}
	o.sink.Emit(exec.Stamp(&exec.PromptRequest{Question: q}, "prompt.request", time.Now()))
}

func (o *promptObserver) Answered(q prompt.Question, a prompt.Answer) {
	e := &exec.PromptAnswer{PromptID: q.ID, Action: a.Action, Content: a.Content, Text: a.Text, Source: a.Source}
	if q.Secret && len(a.Content) > 0 {
		e.Content = []byte(`"***"`)
	}
	o.sink.Emit(exec.Stamp(e, "prompt.answer", time.Now()))
}
