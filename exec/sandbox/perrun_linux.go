package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// runInit is a per-run sandbox seen from hitl (DESIGN §15): one init,
// inside bwrap or a PID namespace of its own, starting every command of
// one view. It ends with the run (Close) and with hitl (its parent-death
// signal).
type runInit struct {
	sock   *sock // hitl's end of the socketpair
	sendMu sync.Mutex
	mu     sync.Mutex
	nextID uint64
	// waiting are the commands in flight: their started, then exited
	// word.
	waiting map[uint64]chan event
	dead    chan struct{} // closed when the socket is gone
	exited  chan struct{} // closed when the init was waited for
	// startErr is why the init never said it was ready (mu), set before
	// dead is closed: commands sent it meanwhile fall back to a sandbox
	// of their own, and the run is told why once.
	startErr error
	// closing: hitl ends it (close), so an end before ready is not the
	// init's failure to start (mu).
	closing bool
	proc    *os.Process
	// hiddenIDs are what its view's hidden paths were when it started
	// (hiddenIDs), joined.
	hiddenIDs string
	// users are the commands given the init (initFor) and not yet
	// ended; retired: a newer init of the same view took its place (what
	// it hides changed), so it ends once it has no users left.
	users   int
	retired bool
	// onSpoiled replaces the init (its view's next command gets a new
	// one): a command left its /dev/shm spoiled.
	onSpoiled func()
}

// use counts a command in (initFor), before it starts.
func (ri *runInit) use() {
	ri.mu.Lock()
	ri.users++
	ri.mu.Unlock()
}

// done counts a command out, once it ended or could not start: the last
// of a retired init's ends it.
func (ri *runInit) done() {
	ri.mu.Lock()
	ri.users--
	last := ri.retired && ri.users == 0
	ri.mu.Unlock()
	if last {
		ri.close()
	}
}

// retire has the init end once its commands have: no new command is given
// it.
func (ri *runInit) retire() {
	ri.mu.Lock()
	ri.retired = true
	idle := ri.users == 0
	ri.mu.Unlock()
	if idle {
		ri.close()
	}
}

// event is a reply and the descriptor it carried.
type event struct {
	reply
	file *os.File
}

// initStartTimeout bounds the init's start (bwrap, the re-exec, the
// ruleset); tests shorten it.
var initStartTimeout = 10 * time.Second

// startInit starts the per-run init of view v: under MechLayered inside
// bwrap's mounts for v, else (MechLandlock, as root) as a re-exec of hitl.
func (s *Sandbox) startInit(v view) (*runInit, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	theirs := os.NewFile(uintptr(pair[1]), "sandbox-init")
	cmd := &osexec.Cmd{Env: []string{}, Dir: "/"}
	var stderr bytes.Buffer
	cmd.Stderr = &capped{w: &stderr, n: 4 << 10}
	v.Dir, v.LoaderEnv = "", nil
	v.MaxRunning, v.FailPrepare, v.FailStart, v.StallStart, v.ThreadSpawns = maxRunning, failPrepare, failStart, stallStart, threadSpawns
	switch s.Mechanism() {
	case MechLayered:
		v.InBwrap, v.PidNS = true, true
		caps := []int{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
		if os.Geteuid() == 0 && v.policy().writeAll {
			// CAP_KILL for the holders alone: what a command that
			// changed its user left is theirs to kill.
			caps = append(caps, unix.CAP_KILL)
			caps = append(caps, seenCaps...)
		}
		data, _ := json.Marshal(v)
		cmd.Path = s.bwrap
		cmd.Args = append(bwrapMounts(v, caps), "--", "/proc/self/fd/3", initArg, "4", string(data))
		cmd.ExtraFiles = []*os.File{s.exe, theirs}
		cmd.SysProcAttr = procAttr()
	case MechLandlock:
		v.PidNS = s.pidns
		data, _ := json.Marshal(v)
		cmd.Path = s.self
		cmd.Args = []string{"hitl-sandbox-init", initArg, "3", string(data)}
		cmd.ExtraFiles = []*os.File{theirs}
		// Not in a PID namespace of its own: /proc is the machine's,
		// and the all-threads Landlock call finds the init's threads
		// there by its pid. Each command's namespace ends with the
		// init (its holder's parent-death signal).
		cmd.SysProcAttr = procAttr()
	default:
		unix.Close(pair[0])
		theirs.Close()
		return nil, fmt.Errorf("no per-run sandbox under %s", s.Mechanism())
	}
	sk, err := newSock(pair[0])
	if err != nil {
		theirs.Close()
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	ri := &runInit{sock: sk, waiting: map[uint64]chan event{}, dead: make(chan struct{}), exited: make(chan struct{})}
	// The init's parent-death signal follows the thread that starts it:
	// one kept for as long as the init lives.
	startErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		// The init's end of the socket is the init's alone: were hitl
		// to keep it, the init's death would never read as the end.
		theirs.Close()
		if err != nil {
			startErr <- err
			close(ri.exited)
			return
		}
		startErr <- nil
		_ = cmd.Wait()
		close(ri.exited)
	}()
	if err := <-startErr; err != nil {
		ri.sock.close()
		return nil, err
	}
	ri.proc = cmd.Process
	// Commands are sent as soon as it runs, not once it is ready: they
	// wait in the socket while it starts (the first line of a run comes as
	// quickly as a model answers), and learn why if it never is.
	go ri.serveFrom(&stderr)
	return ri, nil
}

// serveFrom reads the init's first word, ready or why not, within
// initStartTimeout, then hands each reply to its command (read). An init
// that never became ready is killed; its error, with the first line of
// what it printed (stderr) when it said nothing, is startErr.
func (ri *runInit) serveFrom(stderr *bytes.Buffer) {
	first := make(chan error, 1)
	go func() {
		var r reply
		files, err := ri.sock.recv(&r)
		closeAll(files)
		switch {
		case err != nil:
		case r.Error != "":
			err = errors.New(r.Error)
		case !r.Ready:
			err = errors.New("the init did not say it was ready")
		}
		first <- err
	}()
	var ferr error
	select {
	case ferr = <-first:
	case <-time.After(initStartTimeout):
		ri.kill()
		select {
		case err := <-first:
			if err == nil {
				// Ready after all, as it was killed: it may have
				// started a command (it reads none before), which
				// must not run twice. Its commands learn it ended.
				ri.read()
				return
			}
		case <-time.After(killBound):
			// Not known: its commands fail rather than run twice.
			ri.sock.close()
			ri.gone(nil)
			return
		}
		ferr = fmt.Errorf("the init did not start within %s", initStartTimeout)
	}
	if ferr == nil {
		ri.read()
		return
	}
	ri.kill()
	<-ri.exited // and so its stderr is all read
	if msg := strings.TrimSpace(stderr.String()); msg != "" && errors.Is(ferr, io.EOF) {
		ferr = errors.New(firstLine(msg))
	}
	ri.mu.Lock()
	closing := ri.closing
	ri.mu.Unlock()
	if closing {
		// Ended by hitl as it started: its commands fail (the run's
		// sandbox ended), and bwrap's word stands.
		ferr = nil
	}
	ri.gone(ferr)
}

// gone marks the init's socket gone (dead), having never been ready when
// startErr is not nil: every command still waiting learns so.
func (ri *runInit) gone(startErr error) {
	ri.mu.Lock()
	ri.startErr = startErr
	close(ri.dead)
	ri.waiting = map[uint64]chan event{}
	ri.mu.Unlock()
}

// capped writes at most n bytes to w, dropping the rest.
type capped struct {
	w io.Writer
	n int
}

func (c *capped) Write(p []byte) (int, error) {
	if c.n > 0 {
		k := min(len(p), c.n)
		c.n -= k
		_, _ = c.w.Write(p[:k])
	}
	return len(p), nil
}

// read hands each reply to its command until the socket ends; then every
// command still waiting learns the init is gone.
func (ri *runInit) read() {
	for {
		var r reply
		files, err := ri.sock.recv(&r)
		if err != nil {
			break
		}
		if r.HolderStuck {
			// Its namespace, and the command's end, wait for it. Only
			// a holder is killed so, whatever pidfd came.
			for _, f := range files {
				if pid, err := pidOf(f); err == nil && procName(pid) == holderProcName {
					_ = unix.PidfdSendSignal(int(f.Fd()), unix.SIGKILL, nil, 0)
				}
			}
			closeAll(files)
			continue
		}
		ri.mu.Lock()
		onSpoiled := ri.onSpoiled
		ri.mu.Unlock()
		if r.Spoiled && onSpoiled != nil {
			// Before the command's end is heard: the next command
			// must find a new sandbox.
			onSpoiled()
		}
		ev := event{reply: r}
		if len(files) > 0 {
			ev.file = files[0]
			closeAll(files[1:])
		}
		ri.mu.Lock()
		ch := ri.waiting[r.ID]
		if r.Exited || (!r.Started && r.Error != "") {
			delete(ri.waiting, r.ID)
		}
		ri.mu.Unlock()
		if ch == nil {
			if ev.file != nil {
				ev.file.Close()
			}
			continue
		}
		ch <- ev
	}
	ri.gone(nil)
}

// unpreparedError is the run's sandbox failing a command before it ran
// (it could not make the command's sandbox): the command falls back to a
// sandbox of its own.
type unpreparedError struct{ why string }

func (e *unpreparedError) Error() string { return "cannot prepare a command's sandbox: " + e.why }

// errInitGone is a command whose init ended under it.
var errInitGone = errors.New("sandbox: the run's sandbox ended")

// start asks the init to start req with the descriptors files (stdin,
// stdout, stderr): the command's channel of events, its first (started)
// already read, and its pidfd.
func (ri *runInit) start(req request, files [3]*os.File) (chan event, *os.File, error) {
	ch := make(chan event, 2)
	ri.mu.Lock()
	select {
	case <-ri.dead:
		ri.mu.Unlock()
		return nil, nil, ri.goneErr()
	default:
	}
	ri.nextID++
	req.ID = ri.nextID
	ri.waiting[req.ID] = ch
	ri.mu.Unlock()
	ri.sendMu.Lock()
	err := ri.sock.send(req, []int{int(files[0].Fd()), int(files[1].Fd()), int(files[2].Fd())})
	ri.sendMu.Unlock()
	runtime.KeepAlive(files)
	if err != nil {
		ri.forget(req.ID)
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, os.ErrClosed) {
			// The init is gone, or going: one that never became
			// ready lets the command fall back, as any it was sent.
			select {
			case <-ri.dead:
				if err := ri.failedStart(); err != nil {
					return nil, nil, &initStartError{err}
				}
			case <-time.After(killBound):
			}
		}
		return nil, nil, fmt.Errorf("sandbox: cannot reach the run's sandbox: %w", err)
	}
	select {
	case ev := <-ch:
		if ev.Error != "" {
			if ev.file != nil {
				ev.file.Close()
			}
			if ev.Unprepared {
				return nil, nil, &unpreparedError{ev.Error}
			}
			if ev.Errno != 0 {
				return nil, nil, &os.PathError{Op: "exec", Path: req.Prog, Err: syscall.Errno(ev.Errno)}
			}
			return nil, nil, fmt.Errorf("sandbox: %s", ev.Error)
		}
		if ev.file == nil {
			ri.forget(req.ID)
			return nil, nil, errors.New("sandbox: the run's sandbox sent no pidfd")
		}
		return ch, ev.file, nil
	case <-ri.dead:
		return nil, nil, ri.goneErr()
	}
}

// initStartError is a command sent to an init that never became ready:
// it falls back to a sandbox of its own, as do the run's commands after
// it.
type initStartError struct{ err error }

func (e *initStartError) Error() string {
	return "sandbox: the run's sandbox could not start: " + e.err.Error()
}
func (e *initStartError) Unwrap() error { return e.err }

// goneErr is why a command cannot be (or was not) started by the init,
// once its socket is gone: it never started (initStartError), or it
// ended.
func (ri *runInit) goneErr() error {
	if err := ri.failedStart(); err != nil {
		return &initStartError{err}
	}
	return errInitGone
}

// failedStart is why the init never became ready, nil if it did or may
// still.
func (ri *runInit) failedStart() error {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	return ri.startErr
}

func (ri *runInit) forget(id uint64) {
	ri.mu.Lock()
	delete(ri.waiting, id)
	ri.mu.Unlock()
}

// ended says whether the init has exited and was waited for.
func (ri *runInit) ended() bool {
	select {
	case <-ri.exited:
		return true
	default:
		return false
	}
}

// alive says whether the init still serves.
func (ri *runInit) alive() bool {
	select {
	case <-ri.dead:
		return false
	default:
		return true
	}
}

func (ri *runInit) kill() {
	if ri.proc == nil {
		return
	}
	// bwrap's child waits for bwrap's word before it takes bwrap's death
	// for its own (its parent-death signal): bwrap killed in between
	// leaves it waiting forever, and nothing would end it. So bwrap is
	// stopped first (it starts nothing more, and reaps nothing: its
	// children's pids stay theirs), its children killed (the first
	// process of a PID namespace ends all of it), and then bwrap.
	if ri.proc.Signal(syscall.SIGSTOP) == nil {
		pid := ri.proc.Pid
		for deadline := time.Now().Add(50 * time.Millisecond); !stoppedOrGone(pid) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		for _, child := range childrenOf(pid) {
			_ = syscall.Kill(child, syscall.SIGKILL)
		}
	}
	_ = ri.proc.Signal(syscall.SIGKILL)
}

// stoppedOrGone says whether pid is stopped, a zombie, or no more.
func stoppedOrGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f, err := statFields(data)
	return err != nil || len(f) == 0 || f[0] == "T" || f[0] == "t" || f[0] == "Z" || f[0] == "X"
}

// childrenOf are pid's children, of all its threads.
func childrenOf(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, _ := os.ReadDir(dir)
	var out []int
	for _, t := range tasks {
		data, _ := os.ReadFile(dir + "/" + t.Name() + "/children")
		for _, w := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(w); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// close ends the init: told so (its socket ends), it exits, and the PID
// namespaces of every command left end with it. The run does not wait for
// that; an init not gone within 2 s is killed (and hitl's own end kills
// it: its parent-death signal).
func (ri *runInit) close() {
	ri.mu.Lock()
	ri.closing = true
	ri.mu.Unlock()
	ri.sock.shutdown()
	go func() {
		select {
		case <-ri.exited:
		case <-time.After(2 * time.Second):
			ri.kill()
			<-ri.exited
		}
		ri.sock.close()
	}()
}

// pidOf is the pid, in hitl's PID namespace, of the process pidfd refers
// to; 0 when it has ended and been waited for already (so has all it
// started: its PID namespace ended with it). One ioctl where the kernel
// has it (6.13), on the way of every command's start; else, or for a
// process it cannot name, the pidfd's fdinfo says.
func pidOf(pidfd *os.File) (int, error) {
	info := unix.PidfdInfo{Mask: unix.PIDFD_INFO_PID}
	if unix.IoctlPidfdInfo(int(pidfd.Fd()), &info) == nil && info.Mask&unix.PIDFD_INFO_PID != 0 && info.Pid > 0 {
		return int(info.Pid), nil
	}
	return fdinfoPid(int(pidfd.Fd()))
}

// fdinfoPid is pidOf from /proc/self/fdinfo: the pid in the PID namespace
// of this /proc.
func fdinfoPid(pidfd int) (int, error) {
	data, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(pidfd))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Pid:"); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || pid == 0 {
				return 0, fmt.Errorf("pidfd: no pid (%q)", v)
			}
			return max(pid, 0), nil
		}
	}
	return 0, errors.New("pidfd: no pid")
}

// statFields is the fields of a /proc/PID/stat after the command name
// (which may hold spaces and parentheses): the first is field 3, the
// state.
func statFields(data []byte) ([]string, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil, errors.New("/proc stat: no command name")
	}
	return strings.Fields(string(data[i+1:])), nil
}

// holderProcName is a holder's name (comm): holderName without its NUL.
var holderProcName = string(holderName[:len(holderName)-1])

// procName is the name (comm) of pid in hitl's PID namespace, or "".
func procName(pid int) string {
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(comm), "\n")
}
