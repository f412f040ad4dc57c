package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hitl-dev/hitl/internal/procgroup"
	"golang.org/x/sys/unix"
)

// Spec is one child process.
type Spec struct {
	// Path is the program: a path, or a name looked up in Env's PATH.
	Path string
	// Args are the arguments after the program's name; Argv0, when set,
	// is its argv[0] (else Path).
	Args  []string
	Argv0 string
	Dir   string   // working directory ("": hitl's)
	Env   []string // the whole environment, NAME=value
	// Stdin nil is /dev/null. Stdout and Stderr nil are /dev/null.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Class is who the child is: its policy (policyOf).
	Class Class
	// Writable are the run's working directories, where a ClassAuto child
	// may write (never Dir because it is Dir: the model may choose that).
	Writable []string
	// TempDir is the private temp dir a ClassAuto child may write in (also
	// its TMPDIR); "" gives none.
	TempDir string
	// Network gives a ClassAuto child the network (a permissions.network
	// rule granted it).
	Network bool
	// DenyRead are paths a ClassAuto child cannot read, besides the
	// credential stores (permissions.deny_read).
	DenyRead []string
	// Grace is how long after SIGTERM the group gets SIGKILL (default 2s).
	Grace time.Duration
	// pipes: StdinPipe or StdoutPipe was asked for (a sandbox of its
	// own: the run's passes descriptors, not os/exec's pipes).
	pipes bool
}

// Cmd is a started or startable child in its own session and process group.
type Cmd struct {
	sb    *Sandbox
	spec  Spec
	cmd   *osexec.Cmd
	ctx   context.Context
	grace time.Duration
	// rm is the command when the run's sandbox started it (a per-run
	// init); else cmd is.
	rm *remoteProc

	mu     sync.Mutex
	termAt time.Time
}

// Command makes a child for spec; ctx ending stops its group (SIGTERM, then
// SIGKILL after the grace).
func (s *Sandbox) Command(ctx context.Context, spec Spec) *Cmd {
	if spec.Grace <= 0 {
		spec.Grace = 2 * time.Second
	}
	c := &Cmd{sb: s, spec: spec, grace: spec.Grace, ctx: ctx}
	c.cmd = osexec.CommandContext(ctx, "/nonexistent")
	c.cmd.Dir = spec.Dir
	c.cmd.Env = spec.Env
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = spec.Stdin, spec.Stdout, spec.Stderr
	// A new session: no controlling terminal, so /dev/tty fails, and the
	// child leads its own process group.
	c.cmd.SysProcAttr = procAttr()
	c.cmd.Cancel = func() error {
		c.term()
		return nil
	}
	c.cmd.WaitDelay = spec.Grace
	return c
}

// StdinPipe is a pipe to the child's stdin (an MCP server's).
func (c *Cmd) StdinPipe() (io.WriteCloser, error) {
	c.spec.pipes = true
	return c.cmd.StdinPipe()
}

// StdoutPipe is a pipe from the child's stdout (an MCP server's).
func (c *Cmd) StdoutPipe() (io.ReadCloser, error) {
	c.spec.pipes = true
	return c.cmd.StdoutPipe()
}

// Start resolves the program and starts it inside the sandbox. An error
// wrapping os.ErrNotExist (or exec.ErrNotFound) is a program not found.
func (c *Cmd) Start() error {
	if c.spec.Dir != "" {
		// bwrap's --chdir and the Landlock rules need it whole.
		dir, err := filepath.Abs(c.spec.Dir)
		if err != nil {
			return err
		}
		c.spec.Dir, c.cmd.Dir = dir, dir
	}
	path, err := lookPath(c.spec.Path, c.spec.Dir, c.spec.Env)
	if err != nil {
		return err
	}
	argv0 := c.spec.Argv0
	if argv0 == "" {
		argv0 = c.spec.Path
	}
	argv := append([]string{argv0}, c.spec.Args...)
	if ri := c.sb.initFor(c.spec); ri != nil {
		err := c.startRemote(ri, path, argv)
		if err == nil {
			track(c.pgid(), true)
			return nil
		}
		var unprepared *unpreparedError
		var notStarted *initStartError
		if !errors.As(err, &unprepared) && !errors.As(err, &notStarted) {
			return err
		}
		// The run's sandbox could not make this command's, or never
		// started: it gets one of its own (and so does every command
		// after it).
		c.sb.perRunFailed(err)
	}
	prog, args, err := c.sb.wrap(path, argv, c.spec)
	if err != nil {
		return err
	}
	c.cmd.Path = prog
	c.cmd.Args = args
	c.cmd.Err = nil
	if prog != path {
		c.cmd.Env = withoutLoaderEnv(c.spec.Env)
	}
	if c.sb.Mechanism() == MechLayered {
		c.cmd.ExtraFiles = []*os.File{c.sb.exe} // fd 3: the helper bwrap starts
	}
	if err := c.cmd.Start(); err != nil {
		return err
	}
	track(c.pgid(), true)
	return nil
}

// Wait waits for the child and then stops what it left in its group. Its
// error is ExitError-like: see Status.
func (c *Cmd) Wait() error {
	var err error
	if c.rm != nil {
		// All it left in its PID namespace was killed with its end:
		// nothing is left to stop.
		err = c.rm.wait(c.grace)
	} else {
		err = c.cmd.Wait()
		c.Stop()
	}
	track(c.pgid(), false)
	if errors.Is(err, osexec.ErrWaitDelay) {
		return nil
	}
	return err
}

// Run starts the child and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Pid is the child's pid (its process group's id), 0 before Start.
func (c *Cmd) Pid() int {
	if c.rm != nil {
		return c.rm.pid
	}
	if c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

func (c *Cmd) pgid() int { return c.Pid() }

// term sends SIGTERM to the group, and SIGCONT so stopped members can act
// on it.
func (c *Cmd) term() {
	if c.pgid() == 0 {
		return
	}
	c.mu.Lock()
	if c.termAt.IsZero() {
		c.termAt = time.Now()
	}
	c.mu.Unlock()
	if c.rm != nil {
		c.rm.term()
		return
	}
	if c.sb.bwrapped() {
		// bwrap dies of SIGTERM without passing it on, and the namespace
		// with it: the program would never get to clean up. The
		// processes inside are signalled; SIGKILL (Stop) still ends the
		// namespace.
		for _, pid := range insideProcs(c.pgid()) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
		return
	}
	_ = syscall.Kill(-c.pgid(), syscall.SIGTERM)
	_ = syscall.Kill(-c.pgid(), syscall.SIGCONT)
}

// Stop ends whatever is left of the group: SIGTERM, then SIGKILL when
// members remain after the grace. It returns at once when nothing is left,
// and only when nothing is left (bounded).
func (c *Cmd) Stop() {
	if c.pgid() == 0 || !procgroup.Alive(c.pgid()) {
		return
	}
	c.term()
	c.mu.Lock()
	deadline := c.termAt.Add(c.grace)
	c.mu.Unlock()
	if c.waitGone(deadline) {
		return
	}
	_ = syscall.Kill(-c.pgid(), syscall.SIGKILL)
	c.waitGone(time.Now().Add(time.Second))
}

// Kill sends SIGKILL to the group at once.
func (c *Cmd) Kill() {
	if c.rm != nil {
		c.rm.kill()
		return
	}
	if c.pgid() != 0 {
		_ = syscall.Kill(-c.pgid(), syscall.SIGKILL)
	}
}

// Exited says whether the child has been waited for.
func (c *Cmd) Exited() bool {
	if c.rm != nil {
		return c.rm.exited()
	}
	return c.cmd.ProcessState != nil
}

func (c *Cmd) waitGone(deadline time.Time) bool {
	for time.Now().Before(deadline) {
		if !procgroup.Alive(c.pgid()) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return !procgroup.Alive(c.pgid())
}

// Status says how a child ended from Wait's error: its exit code, or the
// signal that killed it (name "" when none), and ok false when err is not
// an exit (the child could not be waited for).
func Status(err error) (code int, signal string, ok bool) {
	if err == nil {
		return 0, "", true
	}
	var own *ExitError
	if errors.As(err, &own) {
		return statusOf(own.Status)
	}
	var ee *osexec.ExitError
	if !errors.As(err, &ee) {
		return 0, "", false
	}
	if ws, wok := ee.Sys().(syscall.WaitStatus); wok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = ws.Signal().String()
		}
		return 128 + int(ws.Signal()), name, true
	}
	return ee.ExitCode(), "", true
}

func statusOf(ws syscall.WaitStatus) (code int, signal string, ok bool) {
	if ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = ws.Signal().String()
		}
		return 128 + int(ws.Signal()), name, true
	}
	return ws.ExitStatus(), "", true
}

// ExitError is how a child the run's sandbox started ended, when not with
// status 0.
type ExitError struct{ Status syscall.WaitStatus }

// ExitCode is the exit status, or -1 when a signal ended the child (as
// os.ProcessState's).
func (e *ExitError) ExitCode() int {
	if e.Status.Signaled() {
		return -1
	}
	return e.Status.ExitStatus()
}

func (e *ExitError) Error() string {
	if e.Status.Signaled() {
		return "signal: " + e.Status.Signal().String()
	}
	return fmt.Sprintf("exit status %d", e.Status.ExitStatus())
}

// Describe names how a child ended: "exit status 7", "killed by signal
// SIGKILL", or the error.
func Describe(err error) string {
	code, sig, ok := Status(err)
	switch {
	case !ok:
		return err.Error()
	case sig != "":
		return "killed by signal " + sig
	}
	return fmt.Sprintf("exit status %d", code)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return os.ErrPermission
	}
	return nil
}

// loaderEnv are the variables of env the dynamic loader reads (LD_*):
// code they name would run in a wrapper before it confines anything.
func loaderEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "LD_") {
			out = append(out, kv)
		}
	}
	return out
}

// withoutLoaderEnv is env without loaderEnv's variables.
func withoutLoaderEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "LD_") {
			out = append(out, kv)
		}
	}
	return out
}

// running holds the process groups of children in flight, for KillAll.
var running = struct {
	sync.Mutex
	pgids map[int]bool
}{pgids: map[int]bool{}}

func track(pgid int, on bool) {
	if pgid == 0 {
		return
	}
	running.Lock()
	defer running.Unlock()
	if on {
		running.pgids[pgid] = true
	} else {
		delete(running.pgids, pgid)
	}
}

// KillAll sends SIGKILL to the process group of every child still running:
// for a second Ctrl-C, which exits without waiting for any grace.
func KillAll() {
	running.Lock()
	defer running.Unlock()
	for pgid := range running.pgids {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// Running is the number of children in flight (started, not yet waited
// for).
func Running() int {
	running.Lock()
	defer running.Unlock()
	return len(running.pgids)
}
