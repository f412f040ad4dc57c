package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/run"
)

// checkRunFlags checks the flags exec and resume share (the prompt flags
// are checked by newPrompting).
func checkRunFlags(opts *ExecOptions) error {
	if opts.MaxIterations < 0 || (opts.maxIterationsSet && opts.MaxIterations == 0) {
		return usagef("--max-iterations %d: must be at least 1 (leave it out for the agent file's max_iterations, else 50)", opts.MaxIterations)
	}
	if opts.WorkingDir != "" {
		if fi, err := os.Stat(opts.WorkingDir); err != nil || !fi.IsDir() {
			return usagef("--working-dir %s: not a directory", opts.WorkingDir)
		}
	}
	return nil
}

// runAgent sets up the streams of a run (the front end, the event sink,
// the cassette, the spinner), has build make the run, runs it and reports
// its end.
func runAgent(ctx context.Context, opts *ExecOptions, build func(run.Options) (*run.Run, error)) (err error) {
	mode, noFE, err := promptModeWhy(opts.IO, opts.Prompt, opts.JSON)
	if err != nil {
		return err
	}
	cas, err := openCassette(&opts.ModelOptions)
	if err != nil {
		return err
	}
	if cas != nil && opts.resuming {
		// A resumed run goes on from the middle of a replayed recording.
		cas.Seek()
	}
	if cas != nil {
		// Saved on every exit (it is also saved after each exchange).
		defer func() {
			if cerr := cas.Close(); cerr != nil {
				fmt.Fprintf(opts.IO.ErrOut, "hitl: %v\n", cerr)
				if err == nil {
					err = &reportedError{cerr}
				}
			}
		}()
	}
	// A closed stdout ends the run as a signal would, not at its end.
	ctx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	sink, finish := newSinks(opts, mode, func() { cancelRun(&signalError{sig: sigPIPE}) })
	prompting, closeFE, err := newPrompting(opts.IO, &opts.PromptOptions, mode, !opts.JSON && !opts.Quiet)
	if err != nil {
		return err
	}
	defer closeFE()
	prompting.NoFrontEnd = noFE
	if err := opts.ApproveOptions.apply(opts.IO, &prompting); err != nil {
		return err
	}
	ro := run.Options{
		Prompting:     prompting,
		Cassette:      cas,
		WorkingDir:    opts.WorkingDir,
		Yolo:          opts.Yolo,
		NoSandbox:     opts.NoSandbox,
		MaxIterations: opts.MaxIterations,
		Sink:          sink,
		Progress:      progressFunc(sink),
		Notices:       opts.IO.ErrOut,
		Getenv:        opts.IO.Getenv,
		ExitCode:      ExitCode,
	}
	var spin *spinner
	if useSpinner(opts) {
		spin = &spinner{w: opts.IO.ErrOut}
		ro.OnDelta = spin.Delta
		ro.WrapModel = func(m exec.Model) exec.Model { return spinModel{Model: m, spin: spin} }
		if hs, ok := sink.(*humanSink); ok {
			hs.spin = spin
		}
	}
	r, err := build(ro)
	if err != nil {
		return err
	}
	res, runErr := r.Do(ctx)
	spin.Stop() // a call cut off by a signal leaves its spinner running
	err = finish(runErr, res.Outcome)
	if err != nil && res.Kept && run.Resumable(Status(runErr)) && !isReported(err) {
		// The error first, then how to go on.
		fmt.Fprintf(opts.IO.ErrOut, "hitl: %v\n", err)
		fmt.Fprintf(opts.IO.ErrOut, "hitl: to continue this run: %s\n", resumeHint(opts, res.Session))
		return &reportedError{err}
	}
	return err
}

// resumeHint is the command that continues a kept session: by run id when
// it is in the state directory, with the cassette a replayed run needs, and
// a word on the session key when one was set (another key refuses it).
func resumeHint(opts *ExecOptions, session string) string {
	ref := session
	if inDefaultDir(opts.IO, session) {
		ref = strings.TrimSuffix(filepath.Base(session), ".jsonl")
	}
	hint := "hitl resume "
	if opts.Replay != "" {
		hint += "--replay " + opts.Replay + " "
	}
	hint += ref
	if opts.IO.Getenv("HITL_SESSION_KEY") != "" {
		hint += " (with the same HITL_SESSION_KEY)"
	}
	return hint
}

// messageText is the first user turn as given: MESSAGE's words, or the
// --message-file's text.
func messageText(opts *ExecOptions) (string, error) {
	msg := strings.Join(opts.Message, " ")
	if opts.MessageFile == "" {
		return msg, nil
	}
	if len(opts.Message) > 0 {
		return "", usagef("give the message as arguments or with --message-file, not both")
	}
	if opts.MessageFile == "-" {
		return "", usagef("--message-file -: stdin carries answers to the agent's questions; write the message to a file")
	}
	data, err := readMessageFile(opts.MessageFile)
	if err != nil {
		return "", usagef("--message-file: %v", err)
	}
	if len(data) > maxMessageFile {
		return "", usagef("--message-file: %s is larger than %d MiB", opts.MessageFile, maxMessageFile>>20)
	}
	return string(data), nil
}

// maxMessageFile is the most bytes --message-file reads: past it (a huge
// file, a device that never ends) the run stops before it starts.
const maxMessageFile = 4 << 20

func readMessageFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxMessageFile+1))
}
