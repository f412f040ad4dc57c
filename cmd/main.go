// Package cmd is hitl's command line: cobra commands, IO streams, and the
// one place where errors become exit codes.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/exec/tools/shell"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/tty"
)

// Exit codes (DESIGN §6).
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitRejected    = 3
	ExitInput       = 4
	ExitInterrupted = 130
	ExitTerminated  = 143
	ExitBrokenPipe  = 141
)

// usageError is a mistake in how hitl was called (flags, arguments).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// outcomeError ends a command whose run finished with a non-success status
// that has already been reported (rejected, cancelled).
type outcomeError struct{ outcome exec.Outcome }

func (e *outcomeError) Error() string {
	return fmt.Sprintf("%s: %s", e.outcome.Status, e.outcome.Text)
}

// signalError is a run ended by a signal or a broken stdout pipe.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string {
	if e.sig == syscall.SIGPIPE {
		return "stdout was closed (broken pipe)"
	}
	return "interrupted by " + signalName(e.sig)
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// Main runs hitl with the process's arguments and streams and returns the
// exit code.
func Main() int {
	ios := System()
	// A write to a closed stdout must come back as EPIPE, ending the run
	// cleanly, instead of killing the process before children are reaped.
	// Notify rather than Ignore: an ignored signal stays ignored in shell
	// commands (yes | head would print "Broken pipe" errors); a caught one
	// is reset to its default there.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signalContext(context.Background(), ios)
	defer stop()
	root := NewCmdRoot(ios)
	root.SetArgs(os.Args[1:])
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	if cause := context.Cause(ctx); cause != nil && errors.Is(err, context.Canceled) {
		err = cause
	}
	code := ExitCode(err)
	if !isReported(err) {
		fmt.Fprintf(ios.ErrOut, "hitl: %v\n", err)
	}
	return code
}

// reportedError wraps an error that has already been printed.
type reportedError struct{ err error }

func (e *reportedError) Error() string { return e.err.Error() }
func (e *reportedError) Unwrap() error { return e.err }

func isReported(err error) bool {
	var r *reportedError
	var o *outcomeError
	return errors.As(err, &r) || errors.As(err, &o)
}

// ExitCode maps an error to its exit code (DESIGN §6). It is the only place
// that inspects error types.
func ExitCode(err error) int {
	var (
		usage   *usageError
		cfgErrs config.Errors
		cfgErr  *config.Error
		bad     *prompt.BadAnswerError
		stopped *prompt.StopError
		outcome *outcomeError
		sig     *signalError
		noKey   *model.MissingKeyError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &sig):
		switch sig.sig {
		case os.Interrupt:
			return ExitInterrupted
		case syscall.SIGTERM:
			return ExitTerminated
		}
		return ExitBrokenPipe
	case errors.Is(err, prompt.ErrInterrupted):
		return ExitInterrupted
	case errors.As(err, &outcome):
		return statusExitCode(outcome.outcome.Status)
	case errors.As(err, &stopped):
		return ExitInput
	case errors.As(err, &usage), errors.As(err, &cfgErrs), errors.As(err, &cfgErr), errors.As(err, &bad), errors.As(err, &noKey):
		return ExitUsage
	}
	return ExitError
}

// Status maps an error ending a run to the run.finished status.
func Status(err error) exec.Status {
	switch ExitCode(err) {
	case ExitOK:
		return exec.StatusSuccess
	case ExitRejected:
		var outcome *outcomeError
		if errors.As(err, &outcome) {
			return outcome.outcome.Status
		}
		return exec.StatusRejected
	case ExitInput:
		return exec.StatusInputRequired
	case ExitInterrupted, ExitTerminated, ExitBrokenPipe:
		return exec.StatusInterrupted
	}
	return exec.StatusError
}

func statusExitCode(s exec.Status) int {
	switch s {
	case exec.StatusSuccess:
		return ExitOK
	case exec.StatusRejected, exec.StatusCancelled:
		return ExitRejected
	case exec.StatusInputRequired:
		return ExitInput
	case exec.StatusInterrupted:
		return ExitInterrupted
	}
	return ExitError
}

// signalContext is cancelled, with a signalError as its cause, on the first
// SIGINT or SIGTERM; a second SIGINT exits at once.
func signalContext(parent context.Context, ios *IOStreams) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(&signalError{sig: s})
		case <-done:
			return
		}
		select {
		case s := <-ch:
			if s == os.Interrupt {
				fmt.Fprintln(ios.ErrOut, "hitl: interrupted again, exiting now")
				shell.KillAll()        // no grace period left for running commands
				session.FlushAll()     // resumable from the last completed step
				tty.RestoreTerminals() // echo back on, as the front end found it
				os.Exit(ExitInterrupted)
			}
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}
