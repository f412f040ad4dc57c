package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/sandbox"
)

// run runs line in the toolset's shell (SHELL -c LINE), as written: a line
// a person or a hook approved (or a bare allow rule, or --yolo), with the
// secret variables when secrets is set (permission.secrets). An error is a
// shell that cannot start: an infrastructure failure that ends the run.
func (t *Tool) run(ctx context.Context, line, dir string, timeout time.Duration, secrets bool) (exec.Result, error) {
	return t.capture(ctx, timeout, func(tctx context.Context, w *os.File) (string, error) {
		// A person saw this line (or approved every line in advance): it
		// keeps the user's write access, inside the sandbox.
		cmd := t.opts.Sandbox.Command(tctx, sandbox.Spec{
			Path: t.opts.Shell, Args: []string{"-c", line}, Dir: dir, Env: t.env(secrets),
			Stdout: w, Stderr: w, Class: t.opts.Class, Grace: t.opts.Grace,
		})
		if err := cmd.Start(); err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("shell command stopped: %w", ctx.Err())
			}
			return "", fmt.Errorf("shell: cannot start the toolset's shell %s: %w", t.opts.Shell, err)
		}
		if waitErr := cmd.Wait(); waitErr != nil {
			return sandbox.Describe(waitErr), nil
		}
		return "", nil
	})
}

// capture runs body with the write end of a pipe for its output (stdout and
// stderr share it so their order is kept), bounded by timeout and ctx, and
// makes the result: the output captured in bounded memory and masked, and
// how the command ended (body's status: "" for success, else "exit status
// 7", ...). The command's stdin is /dev/null (it can never read hitl's
// answers). An error from body, or ctx ending, is an error, not a result.
func (t *Tool) capture(ctx context.Context, timeout time.Duration, body func(tctx context.Context, w *os.File) (string, error)) (exec.Result, error) {
	// The run's journal has the command's start on disk before it starts.
	if err := exec.StartActing(ctx); err != nil {
		return exec.Result{}, fmt.Errorf("shell: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return exec.Result{}, fmt.Errorf("shell: cannot make a pipe for the output: %w", err)
	}
	defer r.Close()

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := newCapture(MaxOutput)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 64<<10)
		_, _ = io.CopyBuffer(out, r, buf)
	}()

	status, err := body(tctx, w)
	w.Close() // the children hold their own copies
	// The pipe reaches EOF when every process holding it has exited; one
	// that left the group (setsid) could hold it forever.
	select {
	case <-copied:
	case <-time.After(t.opts.Grace):
		_ = r.SetReadDeadline(time.Now())
		<-copied
	}
	if err != nil {
		return exec.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return exec.Result{}, fmt.Errorf("shell command stopped: %w", err)
	}
	var mask func(string) string
	if t.opts.Secrets != nil {
		mask = t.opts.Secrets.Mask
	}
	text := out.Text(mask)
	if errors.Is(tctx.Err(), context.DeadlineExceeded) {
		status = fmt.Sprintf("timed out after %s: the command and everything it started were stopped", timeout)
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
	if mask != nil {
		status = mask(status)
	}
	return exec.Result{IsError: true, Text: text + "[" + status + "]"}, nil
}

// env is hitl's environment without the hidden variables, plus the
// toolset's env, plus HITL_SECRET_<n> when secrets is true. Later entries
// win. Without secrets, no HITL_SECRET_ variable is left, whoever set it.
func (t *Tool) env(secrets bool) []string {
	env := withoutVars(os.Environ(), t.opts.Hide)
	keys := make([]string, 0, len(t.opts.Env))
	for k := range t.opts.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+t.opts.Env[k])
	}
	if !secrets {
		kept := env[:0:0]
		for _, kv := range env {
			if !strings.HasPrefix(strings.ToUpper(kv), "HITL_SECRET_") {
				kept = append(kept, kv)
			}
		}
		return kept
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
