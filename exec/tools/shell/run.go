package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"sort"
	"strings"
	"time"

	"github.com/hitl-dev/hitl/exec"
)

// run runs line in dir, bounded by timeout and ctx. The command's stdin is
// /dev/null (it can never read hitl's answers); stdout and stderr share one
// pipe so their order is kept; the output is captured in bounded memory. The
// command runs in its own process group: on timeout or cancel the group gets
// SIGTERM, then SIGKILL after the grace, and whatever the command left
// running when it ends is stopped the same way.
func (t *Tool) run(ctx context.Context, line, dir string, timeout time.Duration) (exec.Result, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return exec.Result{}, fmt.Errorf("shell: cannot make a pipe for the output: %w", err)
	}
	defer r.Close()

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := osexec.CommandContext(tctx, t.opts.Shell, "-c", line)
	cmd.Dir = dir
	cmd.Env = t.env()
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = w, w
	group := newGroup(cmd, t.opts.Grace)

	err = cmd.Start()
	w.Close() // the child holds its own copy
	if err != nil {
		if ctx.Err() != nil {
			return exec.Result{}, fmt.Errorf("shell command stopped: %w", ctx.Err())
		}
		return errorResult("cannot run %s: %v", t.opts.Shell, err), nil
	}
	group.track(true)
	defer group.track(false)
	out := newCapture(MaxOutput)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 64<<10)
		_, _ = io.CopyBuffer(out, r, buf)
	}()

	waitErr := cmd.Wait()
	group.stop()
	// The pipe reaches EOF when every process holding it has exited; one
	// that left the group (setsid) could hold it forever.
	select {
	case <-copied:
	case <-time.After(t.opts.Grace):
		_ = r.SetReadDeadline(time.Now())
		<-copied
	}

	if err := ctx.Err(); err != nil {
		return exec.Result{}, fmt.Errorf("shell command stopped: %w", err)
	}
	var mask func(string) string
	if t.opts.Secrets != nil {
		mask = t.opts.Secrets.Mask
	}
	text := out.Text(mask)
	status := ""
	switch {
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		status = fmt.Sprintf("[timed out after %s: the command and everything it started were stopped]", timeout)
	case waitErr != nil:
		status = "[" + describeExit(waitErr) + "]"
	}
	if status == "" {
		if text == "" {
			text = "(no output)"
		}
		return exec.Result{Text: text}, nil
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return exec.Result{IsError: true, Text: text + status}, nil
}

// describeExit names how a command ended: "exit status 7", "killed by signal
// SIGKILL".
func describeExit(err error) string {
	var ee *osexec.ExitError
	if errors.As(err, &ee) {
		if sig, ok := signalOf(ee.ProcessState); ok {
			return "killed by signal " + sig
		}
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error()
}

// env is hitl's environment without the hidden variables, plus the
// toolset's env, plus HITL_SECRET_<n>. Later entries win.
func (t *Tool) env() []string {
	env := withoutVars(os.Environ(), t.opts.Hide)
	keys := make([]string, 0, len(t.opts.Env))
	for k := range t.opts.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+t.opts.Env[k])
	}
	if t.opts.Secrets != nil {
		env = append(env, t.opts.Secrets.Env()...)
	}
	return env
}

// withoutVars drops the NAME=value entries of env whose NAME is in names.
func withoutVars(env, names []string) []string {
	if len(names) == 0 {
		return env
	}
	hidden := make(map[string]bool, len(names))
	for _, n := range names {
		hidden[n] = true
	}
	kept := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !hidden[name] {
			kept = append(kept, kv)
		}
	}
	return kept
}
