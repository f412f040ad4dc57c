package cmd

import (
	"io"
	"os"
	"time"

	"github.com/hitl-dev/hitl/exec/run"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/tty"
	"github.com/spf13/pflag"
)

// PromptOptions are the flags that decide how questions are answered; exec,
// resume and ask share them.
type PromptOptions struct {
	Prompt        string
	Answers       string
	Unanswered    string
	PromptTimeout time.Duration
	// resuming: hitl resume, the one command an AG-UI resume document
	// answers.
	resuming bool
}

func (o *PromptOptions) addFlags(f *pflag.FlagSet, withUnanswered bool) {
	f.StringVar(&o.Prompt, "prompt", "", "how questions are asked, `MODE`: auto, tty, jsonl or none (default auto; env HITL_PROMPT)")
	f.StringVar(&o.Answers, "answers", "", "scripted answers `FILE` (YAML or JSONL), consulted before the front end (default env HITL_ANSWERS)")
	if withUnanswered {
		f.StringVar(&o.Unanswered, "unanswered", "stop", "what a question nobody answers becomes, `POLICY`: stop, cancel or default")
	}
	f.DurationVar(&o.PromptTimeout, "prompt-timeout", 0, "a question unanswered for `DURATION` (e.g. 5m) is unanswered (0 = no limit)")
}

// promptMode resolves --prompt: the flag, else HITL_PROMPT, else jsonl when
// --json, else auto.
func promptMode(ios *IOStreams, flag string, jsonOut bool) (string, error) {
	mode, _, err := promptModeWhy(ios, flag, jsonOut)
	return mode, err
}

// ciNoFrontEnd says why auto chose no front end under CI.
const ciNoFrontEnd = "no front end: the CI variable is set and stdin is a terminal nobody types JSON answers into (pass --prompt tty to ask on that terminal, or give the answer with --answers FILE)"

// promptModeWhy is promptMode, and why there is no front end when auto
// chose none (CI), "" otherwise.
func promptModeWhy(ios *IOStreams, flag string, jsonOut bool) (string, string, error) {
	mode, from := flag, "--prompt"
	if mode == "" {
		mode, from = ios.Getenv("HITL_PROMPT"), "HITL_PROMPT"
	}
	if mode == "" && jsonOut {
		mode = "jsonl"
	}
	if mode == "" {
		mode = "auto"
	}
	switch mode {
	case "auto":
		switch {
		case ios.CanPrompt():
			return "tty", "", nil
		case ios.IsStdinTTY() && !ios.InCI():
			// stderr redirected (2>log) with a person at the terminal:
			// ask there (on /dev/tty), never wait for JSON on a blank
			// screen.
			return "tty", "", nil
		case ios.InCI() && ios.IsStdinTTY():
			// A CI system that gives the job a pseudo-terminal: nobody
			// will ever type JSON there, so waiting for it would hang.
			return "none", ciNoFrontEnd, nil
		}
		return "jsonl", "", nil
	case "tty", "jsonl", "none":
		return mode, "", nil
	}
	return "", "", usagef("%s %q: expected auto, tty, jsonl or none", from, mode)
}

// newPrompting reads the prompt flags: the answers file, the front end of
// mode (human: JSONL mode tells a person on stderr what it waits for), the
// time limit and the policy. closer releases /dev/tty.
func newPrompting(ios *IOStreams, po *PromptOptions, mode string, human bool) (run.Prompting, func(), error) {
	p := run.Prompting{Timeout: po.PromptTimeout}
	if po.PromptTimeout < 0 {
		return p, nil, usagef("--prompt-timeout must not be negative")
	}
	if po.Unanswered != "" {
		policy, err := prompt.ParseUnanswered(po.Unanswered)
		if err != nil {
			return p, nil, &usageError{err}
		}
		p.Unanswered = policy
	}
	answers := po.Answers
	if answers == "" {
		// One answers file for every hitl ask and hitl exec of a script.
		answers = ios.Getenv("HITL_ANSWERS")
	}
	if answers != "" {
		af, err := prompt.LoadAnswers(answers)
		if err != nil {
			return p, nil, err
		}
		if af.Resume() && !po.resuming {
			return p, nil, af.NotResuming()
		}
		p.Answers = af
	}
	var notice io.Writer
	if human {
		notice = ios.ErrOut
	}
	fe, closer, err := frontEnd(ios, mode, notice)
	if err != nil {
		return p, nil, err
	}
	p.FrontEnd = fe
	return p, closer, nil
}

// frontEnd builds the front end of mode. closer releases /dev/tty.
func frontEnd(ios *IOStreams, mode string, notice io.Writer) (fe prompt.FrontEnd, closer func(), err error) {
	closer = func() {}
	switch mode {
	case "none":
		return nil, closer, nil
	case "jsonl":
		// One line per question, never more: a script's next hitl ask
		// reads the next answer line of the same stdin.
		j := prompt.NewJSONL(prompt.ExactLines(ios.In))
		j.Notice = notice
		if notice == nil && ios.IsStdinTTY() && ios.IsStderrTTY() {
			// --json at a terminal: a person types the answers.
			j.TerminalHint = ios.ErrOut
		}
		j.Refused = ios.ErrOut
		return j, closer, nil
	}
	// tty: stdin when it is a terminal, else /dev/tty (the git-hook case).
	in, out := ios.TTYIn, ios.TTYOut
	if in == nil || !ios.IsStdinTTY() || !ios.IsStderrTTY() {
		f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return nil, closer, usagef("--prompt tty: no terminal to ask on (%v); use --prompt jsonl and pipe answers, or --answers", err)
		}
		in, out = f, f
		closer = func() { f.Close() }
	}
	return ttyFrontEnd(in, out, closer)
}

// ttyFrontEnd is the terminal front end on in and out; closer releases
// them.
func ttyFrontEnd(in, out *os.File, closer func()) (prompt.FrontEnd, func(), error) {
	t := tty.New(in, out)
	// The front end owns the terminal's modes from now on (no echo
	// between questions): put them back before /dev/tty is closed.
	release := closer
	closer = func() { t.Close(); release() }
	return t, closer, nil
}
