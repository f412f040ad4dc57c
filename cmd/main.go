// Package cmd is hitl's command line: cobra commands, IO streams, and the
// one place where errors become exit codes.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/ext"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/exec/run"
	"github.com/hitl-dev/hitl/exec/sandbox"
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
	ExitHangup      = 129
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
	case syscall.SIGHUP:
		return "SIGHUP (the terminal closed)"
	}
	return s.String()
}

// Main runs hitl with the process's arguments and streams and returns the
// exit code.
func Main() int {
	// Before anything else: no secret stays in hitl's environment block,
	// where a child could read it (DESIGN §12).
	sandbox.HideEnviron(os.Args)
	ios := System()
	// A write to a closed stdout must come back as EPIPE, ending the run
	// cleanly, instead of killing the process before children are reaped.
	// Notify rather than Ignore: an ignored signal stays ignored in shell
	// commands (yes | head would print "Broken pipe" errors); a caught one
	// is reset to its default there.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// hitl logs nothing through the standard logger; the Gemini SDK does
	// (warnings, every stream error), which would garble the terminal and
	// --json output. hitl reports those errors itself.
	log.SetOutput(io.Discard)
	ctx, hard := run.WithHardExit(context.Background())
	ctx, stop := signalContext(ctx, ios, hard)
	defer stop()
	root := newCmdRootFor(ios, os.Args[1:])
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
	var o *run.OutcomeError
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
		outcome *run.OutcomeError
		runUse  *run.UsageError
		sig     *signalError
		noKey   *model.MissingKeyError
		noExt   *ext.NotFoundError
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
		case syscall.SIGHUP:
			return ExitHangup
		}
		return ExitBrokenPipe
	case errors.Is(err, prompt.ErrInterrupted):
		return ExitInterrupted
	case errors.As(err, &outcome):
		return statusExitCode(outcome.Outcome.Status)
	case errors.As(err, &stopped):
		return ExitInput
	case errors.As(err, &usage), errors.As(err, &runUse), errors.As(err, &cfgErrs), errors.As(err, &cfgErr), errors.As(err, &bad), errors.As(err, &noKey), errors.As(err, &noExt):
		return ExitUsage
	}
	return ExitError
}

// Status maps an error ending a run to the run.finished status.
func Status(err error) exec.Status { return run.Status(ExitCode(err), err) }

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
// SIGINT, SIGTERM or SIGHUP (the terminal closed: the run ends as for
// SIGTERM, its commands killed and its session kept); a second SIGINT exits at once, after what the runs
// registered in hard (their journals) is done.
func signalContext(parent context.Context, ios *IOStreams, hard *run.HardExit) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
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
				sandbox.KillAll()      // no grace period left for running commands
				hard.Run()             // journals flushed: resumable from the last completed step
				tty.RestoreTerminals() // echo back on, as the front end found it
				sandbox.RemoveTempDirs(time.Second)
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
