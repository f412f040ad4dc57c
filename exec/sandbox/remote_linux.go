package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// perRun is what a Sandbox keeps of its per-run inits: one per view
// (class, writable directories, hidden paths, network), started when a
// command first needs it.
type perRun struct {
	mu sync.Mutex
	// inits are keyed by their view. bwrap's mounts hide what was at
	// the hidden paths when an init started, and a rename over a hidden
	// file from outside takes the mount on it away: an init whose hidden
	// paths are no longer what they were (hiddenIDs) is replaced.
	inits map[string]*runInit
	// retired are the inits replaced so, each ending with its last
	// command (or the run).
	retired []*runInit
	// off: the per-run sandbox could not start (or cannot exist here);
	// every command gets a sandbox of its own (the run was told why).
	off bool
	// closed: the run ended (Close); a command after it gets a sandbox
	// of its own, none starts.
	closed bool
}

// perRunWhy says why a Sandbox of mechanism m cannot have a per-run
// sandbox at all, or "".
func perRunWhy(m Mechanism, pidns bool) string {
	if m != MechLayered && m != MechLandlock {
		return "no per-run sandbox without Landlock"
	}
	if m == MechLandlock && !pidns {
		return "each command gets a sandbox of its own (a few milliseconds each): the run's sandbox needs a PID namespace per command"
	}
	if abi := landlockABI(); abi < minInitABI {
		return "the kernel's Landlock ABI is below 6 (scoped signals), so each command gets a sandbox of its own"
	}
	return ""
}

// initFor is the per-run init for spec's command, started if need be, or
// nil when the command gets a sandbox of its own: a stdio MCP server (it
// lives as long as the run anyway), or no per-run sandbox here (said once
// through Notify).
func (s *Sandbox) initFor(spec Spec) *runInit { return s.initOf(spec, false) }

// initOf is initFor; for a sandbox started ahead (Prepare), a failure is
// no one's to hear yet: the command that needs it tries again, and is told.
func (s *Sandbox) initOf(spec Spec, ahead bool) *runInit {
	if s == nil || spec.Class == ClassMCP || spec.pipes {
		return nil
	}
	pr := &s.perRun
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.off || pr.closed {
		return nil
	}
	v := s.viewOf(spec)
	if v.check() != nil {
		return nil // the command's own start says why
	}
	v.Dir, v.LoaderEnv = "", nil
	data, _ := json.Marshal(v)
	key, ids := string(data), strings.Join(hiddenIDs(v.Hidden), " ")
	if ri := pr.inits[key]; ri != nil {
		if err := ri.failedStart(); err != nil && !ahead {
			// Started ahead (Prepare), it never became ready: the
			// command falls back and tells the run.
			s.initStartFailedLocked(err)
			return nil
		} else if err != nil {
			// A start ahead again (the run's other Prepare) is no
			// one's to hear: it tries again.
			delete(pr.inits, key)
			pr.retireLocked(ri)
		}
	}
	if ri := pr.inits[key]; ri != nil && ri.alive() && ri.hiddenIDs == ids {
		if !ahead {
			ri.use()
		}
		return ri
	}
	ri, err := startInitHook(s, v)
	if err != nil && ahead {
		return nil
	}
	if err != nil {
		s.initStartFailedLocked(err)
		return nil
	}
	if pr.inits == nil {
		pr.inits = map[string]*runInit{}
	}
	ri.hiddenIDs = ids
	ri.mu.Lock() // its reader runs already
	ri.onSpoiled = func() { s.replaceInit(key, ri) }
	ri.mu.Unlock()
	if old := pr.inits[key]; old != nil {
		// Dead, or hiding what is no longer there.
		pr.retireLocked(old)
	}
	pr.inits[key] = ri
	if !ahead {
		ri.use()
	}
	return ri
}

// replaceInit retires ri, the init of key, if it still is: the next
// command of its view starts a new one.
func (s *Sandbox) replaceInit(key string, ri *runInit) {
	pr := &s.perRun
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.inits[key] != ri {
		return
	}
	delete(pr.inits, key)
	pr.retireLocked(ri)
}

// retireLocked has ri end with the commands still in it (pr.mu held), and
// keeps it until then for Close.
func (pr *perRun) retireLocked(ri *runInit) {
	pr.retired = append(slices.DeleteFunc(pr.retired, (*runInit).ended), ri)
	ri.retire()
}

// Prepare starts, in the background, the run's sandbox that a command of
// spec would run in, so that the first such command does not wait for it
// (a run whose allow rules may run commands unasked). Nothing happens where
// there is no per-run sandbox.
func (s *Sandbox) Prepare(spec Spec) {
	if s == nil {
		return
	}
	go s.initOf(spec, true) // nothing where it is off (under its lock)
}

// initStartFailedLocked turns the run's sandbox off (pr.mu held) after its
// init could not start (err), and tells the run once.
func (s *Sandbox) initStartFailedLocked(err error) {
	if s.bwrapped() {
		// bwrap did not run after all: the next run asks it again.
		forgetBwrapWorks(s.stateDir)
	}
	if !s.perRun.off {
		s.perRunOffLocked("could not start (" + err.Error() + ")")
	}
}

// perRunFailed turns the run's sandbox off after it could not prepare a
// command's (why): each command gets a sandbox of its own from now on, and
// the run is told once.
func (s *Sandbox) perRunFailed(why error) {
	pr := &s.perRun
	pr.mu.Lock()
	defer pr.mu.Unlock()
	var notStarted *initStartError
	if errors.As(why, &notStarted) {
		s.initStartFailedLocked(notStarted.err)
		return
	}
	if !pr.off {
		s.perRunOffLocked("could not start a command (" + why.Error() + ")")
	}
}

// perRunOffLocked turns the run's sandbox off (pr.mu held), ends the inits
// it has, and tells the run once why: what the run's sandbox did, failing.
func (s *Sandbox) perRunOffLocked(what string) {
	pr := &s.perRun
	pr.off = true
	// Each ends with its last command: one running in another view's
	// sandbox is not ended by this one's failure.
	for _, ri := range pr.inits {
		pr.retireLocked(ri)
	}
	pr.inits = nil
	if s.Notify != nil {
		s.Notify("the run's sandbox " + what + ": each command gets a sandbox of its own, which costs a few milliseconds more")
	}
}

// startInitHook starts an init (tests make it fail).
var startInitHook = (*Sandbox).startInit

// Close ends the run's sandboxes: every command still in one is killed;
// the run's temp dir goes with them.
func (s *Sandbox) Close() {
	if s == nil {
		return
	}
	pr := &s.perRun
	pr.mu.Lock()
	pr.closed = true
	inits := slices.Collect(maps.Values(pr.inits))
	inits = append(inits, pr.retired...)
	pr.inits, pr.retired = nil, nil
	pr.mu.Unlock()
	for _, ri := range inits {
		ri.close()
	}
	s.removeTempDir()
}

// remoteProc is a command the run's init started.
type remoteProc struct {
	ri     *runInit
	events chan event
	pidfd  *os.File
	pid    int // in hitl's PID namespace: the command's group too
	done   chan struct{}
	status syscall.WaitStatus
	err    error // the init ended under the command

	closeAfterWait []io.Closer
	copiers        sync.WaitGroup
	copying        bool        // a copier runs
	unwatch        func() bool // stops watching the command's context

	// sigMu keeps a signal from using pidfd as it is closed.
	sigMu sync.Mutex
}

// signal sends sig to the command itself, never after it was waited for.
func (rp *remoteProc) signal(sig unix.Signal) {
	rp.sigMu.Lock()
	defer rp.sigMu.Unlock()
	if rp.pidfd != nil && !rp.exited() {
		_ = unix.PidfdSendSignal(int(rp.pidfd.Fd()), sig, nil, 0)
	}
}

// startRemote starts the command in the run's init.
func (c *Cmd) startRemote(ri *runInit, path string, argv []string) error {
	var childEnds []*os.File
	closeChild := func() {
		for _, f := range childEnds {
			f.Close()
		}
	}
	rp := &remoteProc{ri: ri, done: make(chan struct{})}
	fail := func(err error) error {
		ri.done()
		closeChild()
		for _, cl := range rp.closeAfterWait {
			cl.Close()
		}
		return err
	}
	var files [3]*os.File
	var copies []func()
	in, err := c.stdinFile(rp, &childEnds, &copies)
	if err != nil {
		return fail(err)
	}
	files[0] = in
	if files[1], err = c.outFile(c.spec.Stdout, rp, &childEnds, &copies); err != nil {
		return fail(err)
	}
	if c.spec.Stderr == c.spec.Stdout {
		files[2] = files[1] // one pipe, or one /dev/null
	} else if files[2], err = c.outFile(c.spec.Stderr, rp, &childEnds, &copies); err != nil {
		return fail(err)
	}
	dir := c.spec.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	events, pidfd, err := ri.start(request{Prog: path, Argv: argv, Env: c.spec.Env, Dir: dir}, files)
	closeChild()
	if err != nil {
		return fail(err)
	}
	pid, err := pidOf(pidfd)
	if err != nil {
		// Not left running unsupervised.
		_ = unix.PidfdSendSignal(int(pidfd.Fd()), unix.SIGKILL, nil, 0)
		pidfd.Close()
		return fail(err)
	}
	rp.events, rp.pidfd, rp.pid = events, pidfd, pid
	c.rm = rp
	for _, f := range copies {
		rp.copiers.Add(1)
		go func() {
			defer rp.copiers.Done()
			f()
		}()
	}
	rp.copying = len(copies) > 0
	// No goroutine waits for a context that may never end: AfterFunc
	// starts one when it does.
	rp.unwatch = context.AfterFunc(c.ctx, c.watchContext)
	go rp.waitExit()
	return nil
}

// stdinFile is the command's stdin: /dev/null, the file itself, or a pipe
// fed from the reader.
func (c *Cmd) stdinFile(rp *remoteProc, childEnds *[]*os.File, copies *[]func()) (*os.File, error) {
	switch r := c.spec.Stdin.(type) {
	case nil:
		f, err := os.Open(os.DevNull)
		if err != nil {
			return nil, err
		}
		*childEnds = append(*childEnds, f)
		return f, nil
	case *os.File:
		return r, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	*childEnds = append(*childEnds, pr)
	rp.closeAfterWait = append(rp.closeAfterWait, pw)
	src := c.spec.Stdin
	*copies = append(*copies, func() {
		// A command that exits before reading its stdin ends the copy
		// (EPIPE): no matter.
		_, _ = io.Copy(pw, src)
		pw.Close()
	})
	return pr, nil
}

// outFile is a stdout or stderr: /dev/null, the file itself, or a pipe
// copied to the writer.
func (c *Cmd) outFile(w io.Writer, rp *remoteProc, childEnds *[]*os.File, copies *[]func()) (*os.File, error) {
	switch f := w.(type) {
	case nil:
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		*childEnds = append(*childEnds, null)
		return null, nil
	case *os.File:
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	*childEnds = append(*childEnds, pw)
	rp.closeAfterWait = append(rp.closeAfterWait, pr)
	*copies = append(*copies, func() { _, _ = io.Copy(w, pr) })
	return pw, nil
}

// waitExit waits for the init's word that the command ended.
func (rp *remoteProc) waitExit() {
	defer rp.ri.done()
	defer rp.unwatch()
	defer close(rp.done)
	for {
		select {
		case ev := <-rp.events:
			if ev.file != nil {
				ev.file.Close()
			}
			if ev.Exited {
				rp.status = syscall.WaitStatus(ev.Status)
				return
			}
		case <-rp.ri.dead:
			// The reader may have handed over the exit just before.
			select {
			case ev := <-rp.events:
				if ev.Exited {
					rp.status = syscall.WaitStatus(ev.Status)
					return
				}
			default:
			}
			rp.err = errInitGone
			if rp.pid > 0 {
				_ = syscall.Kill(-rp.pid, syscall.SIGKILL)
			}
			return
		}
	}
}

// watchContext stops the command when its context ends: SIGTERM, SIGKILL
// after the grace.
func (c *Cmd) watchContext() {
	rp := c.rm
	select {
	case <-rp.done:
		return
	case <-c.ctx.Done():
	}
	c.term()
	select {
	case <-rp.done:
		return
	case <-time.After(c.grace):
		c.Kill()
	}
	// Never a hang: a command the init cannot end, the init is ended
	// (and every command in it, which fail as their init is gone).
	select {
	case <-rp.done:
	case <-time.After(killBound):
		rp.ri.kill()
	}
}

// killBound is how long after SIGKILL a command's end may take before its
// init is ended.
var killBound = 5 * time.Second

// wait waits for the command, then for its output to be copied (at most
// the grace: a process that left the group may hold a pipe).
func (rp *remoteProc) wait(grace time.Duration) error {
	<-rp.done
	copied := make(chan struct{})
	if rp.copying {
		go func() {
			rp.copiers.Wait()
			close(copied)
		}()
	} else {
		close(copied)
	}
	select {
	case <-copied:
	case <-time.After(grace):
	}
	for _, cl := range rp.closeAfterWait {
		cl.Close()
	}
	<-copied
	rp.sigMu.Lock()
	rp.pidfd.Close()
	rp.pidfd = nil
	rp.sigMu.Unlock()
	if rp.err != nil {
		return rp.err
	}
	ws := rp.status
	if ws.Exited() && ws.ExitStatus() == 0 {
		return nil
	}
	return &ExitError{Status: ws}
}

// term signals the command's group: SIGTERM and SIGCONT. Nothing is sent
// once the command has ended (its pid may be another's by then).
func (rp *remoteProc) term() {
	if rp.pid <= 0 || rp.exited() {
		return
	}
	_ = syscall.Kill(-rp.pid, syscall.SIGTERM)
	_ = syscall.Kill(-rp.pid, syscall.SIGCONT)
}

// kill ends the command and, with its end, everything it started: its
// holder kills all it left in its PID namespace.
func (rp *remoteProc) kill() {
	rp.signal(unix.SIGKILL)
}

func (rp *remoteProc) exited() bool {
	select {
	case <-rp.done:
		return true
	default:
		return false
	}
}

// landlockABI is the kernel's Landlock ABI (0 without).
func landlockABI() int {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return abi
}
