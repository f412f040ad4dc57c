package cmd

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IOStreams are the standard streams of a command, with what is known about
// them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// TTYIn and TTYOut are stdin and stderr as files, for the terminal
	// front end; nil in tests that fake the streams.
	TTYIn, TTYOut *os.File

	stdinTTY, stdoutTTY, stderrTTY bool
	// Getenv reads the environment (a fake in tests).
	Getenv    func(string) string
	LookupEnv func(string) (string, bool)
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		TTYIn:     os.Stdin,
		TTYOut:    os.Stderr,
		stdinTTY:  isTerminal(os.Stdin),
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
		Getenv:    os.Getenv,
		LookupEnv: os.LookupEnv,
	}
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

func (s *IOStreams) IsStdinTTY() bool  { return s.stdinTTY }
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// CanPrompt reports whether a person can be asked on this terminal: stdin
// and stderr are terminals and we are not in CI (CI systems that allocate a
// pseudo-terminal must not end up waiting on a prompt).
func (s *IOStreams) CanPrompt() bool {
	return s.stdinTTY && s.stderrTTY && !s.InCI()
}

// InCI reports whether the CI variable is set to anything but false.
func (s *IOStreams) InCI() bool {
	ci := s.Getenv("CI")
	return ci != "" && ci != "false" && ci != "0"
}
