package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"sort"
	"sync/atomic"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// runChecked runs a line allowed without asking from the tree the rules
// checked (DESIGN §7: what is checked is what runs): hitl interprets it
// (mvdan.cc/sh/v3/interp), so no other parser reads it. Before each
// command, builtins included, its final argument list (globs, ~ and braces
// expanded) is judged again by the rules; one that no longer passes stops
// the line. Each program runs in its own process group, with the toolset's
// environment without the secret variables, stdin /dev/null, and output
// captured like run's. Files other than /dev/null are never opened.
func (t *Tool) runChecked(ctx context.Context, prog *syntax.File, dir string, timeout time.Duration, callArgs map[string]any) (exec.Result, error) {
	return t.capture(ctx, timeout, func(tctx context.Context, w *os.File) (string, error) {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return "", fmt.Errorf("shell: %w", err)
		}
		defer null.Close()
		// Programs of a pipeline are rechecked concurrently.
		var stop atomic.Pointer[stopped]
		runner, err := interp.New(
			interp.Env(expand.ListEnviron(t.env(false)...)),
			interp.Dir(dir),
			interp.StdIO(null, w, w),
			interp.CallHandler(func(ctx context.Context, argv []string) ([]string, error) {
				// Each command is judged where it will run: after the
				// line's own cd, in the interpreter's directory, whole
				// (a cwd= rule naming the call's directory then no
				// longer passes).
				args := callArgs
				if hc := interp.HandlerCtx(ctx); hc.Dir != dir {
					args = maps.Clone(callArgs)
					if args == nil {
						args = map[string]any{}
					}
					args["cwd"] = hc.Dir
				}
				if err := t.opts.Permissions.Recheck(Name, argv, args); err != nil {
					s := &stopped{err}
					stop.CompareAndSwap(nil, s)
					return nil, s
				}
				return argv, nil
			}),
			interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
				return func(ctx context.Context, argv []string) error { return t.execProgram(ctx, argv, callArgs) }
			}),
			interp.OpenHandler(openDevNull),
			interp.ReadDirHandler2(boundedReadDir()),
		)
		if err != nil {
			return "", fmt.Errorf("shell: cannot make the interpreter: %w", err)
		}
		err = runner.Run(tctx, prog)
		var status interp.ExitStatus
		switch {
		case err == nil:
			return "", nil
		case stop.Load() != nil:
			return fmt.Sprintf("stopped before %v, so it was not run", stop.Load().err), nil
		case errors.As(err, &status):
			return fmt.Sprintf("exit status %d", uint8(status)), nil
		case tctx.Err() != nil:
			return "", nil // timed out, or the run's end: capture says which
		}
		return err.Error(), nil
	})
}

// stopped is a command the recheck refused.
type stopped struct{ err error }

func (s *stopped) Error() string { return s.err.Error() }

// openDevNull is the interpreter's only way to open a file: the checker
// allows redirections to and from /dev/null only.
func openDevNull(_ context.Context, path string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	if path != os.DevNull {
		return nil, fmt.Errorf("%s: not opened: a line run without asking opens no file but %s", path, os.DevNull)
	}
	return os.OpenFile(path, flag, perm)
}

// maxGlobEntries bounds the directory entries the globs of one line read:
// glob expansion runs inside hitl, where the timeout cannot kill it.
const maxGlobEntries = 200_000

// boundedReadDir reads directories for glob expansion, stopping at the
// line's end (timeout, cancel) and past maxGlobEntries.
func boundedReadDir() interp.ReadDirHandlerFunc2 {
	var read atomic.Int64
	return func(ctx context.Context, path string) ([]fs.DirEntry, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		entries, err := os.ReadDir(path)
		if read.Add(int64(len(entries))) > maxGlobEntries {
			return nil, fmt.Errorf("globs read more than %d directory entries", maxGlobEntries)
		}
		return entries, err
	}
}

// execProgram runs one program of a checked line inside the sandbox as a
// command nobody saw (sandbox.ClassAuto): it may write only in the run's
// working directory (never its own directory because it is its own: the
// line may cd) and the run's private temp dir, and has the network only
// where a permissions.network rule gives it. The line's timeout or the run's end stops its group
// (SIGTERM, SIGKILL after the grace), KillAll reaches it, and what it
// leaves running when it exits is stopped.
func (t *Tool) execProgram(ctx context.Context, argv []string, callArgs map[string]any) error {
	hc := interp.HandlerCtx(ctx)
	// Only absolute PATH entries: an empty one would find a program
	// planted in the working directory (sandbox.LookPath).
	path, err := sandbox.LookPath(argv[0], hc.Dir, environList(hc.Env))
	if err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", argv[0], err)
		return interp.ExitStatus(127)
	}
	root, why := t.writableRoot()
	if root == "" {
		fmt.Fprintf(hc.Stderr, "%s: %s\n", argv[0], why)
		return interp.ExitStatus(126)
	}
	tmp, err := t.tempDir(root)
	if err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", argv[0], err)
		return interp.ExitStatus(126)
	}
	env := append(environList(hc.Env), "TMPDIR="+tmp)
	cmd := t.opts.Sandbox.Command(ctx, sandbox.Spec{
		Path: path, Args: argv[1:], Argv0: argv[0], Dir: hc.Dir, Env: env,
		Stdin: hc.Stdin, Stdout: hc.Stdout, Stderr: hc.Stderr,
		Class: sandbox.ClassAuto, Writable: []string{root}, TempDir: tmp,
		Network: t.opts.Permissions.Network(Name, argv, callArgs), DenyRead: t.opts.DenyRead,
		Grace: t.opts.Grace,
	})
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", argv[0], err)
		if errors.Is(err, fs.ErrNotExist) {
			return interp.ExitStatus(127)
		}
		return interp.ExitStatus(126)
	}
	err = cmd.Wait()
	code, sig, ok := sandbox.Status(err)
	switch {
	case !ok:
		return err
	case sig != "" && ctx.Err() != nil:
		return ctx.Err()
	case code == 0:
		return nil
	}
	return interp.ExitStatus(code)
}

// environList is the exported variables of env, as NAME=value.
func environList(env expand.Environ) []string {
	vars := map[string]string{}
	env.Each(func(name string, vr expand.Variable) bool {
		if !vr.IsSet() {
			delete(vars, name)
		} else if vr.Exported && vr.Kind == expand.String {
			vars[name] = vr.String()
		}
		return true
	})
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
