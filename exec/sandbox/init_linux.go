package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// initArg is argv[1] of the per-run sandbox's init (DESIGN §15): a re-exec
// of hitl, inside bwrap or in a PID namespace of its own, confined by its
// view's Landlock domain and the commands' seccomp filter, that starts each
// command hitl sends it over a socketpair. Commands are started by workers:
// threads of their own, locked and never given back, each confined once
// alone (capabilities, a Landlock domain of its own that scopes signals, a
// PID namespace for its children whose first process kills all a command
// left when it ends), that start command after command: each command
// inherits its thread's confinement; the init keeps none of it.
const initArg = "__hitl_sandbox_init__"

// minInitABI is the Landlock ABI the per-run sandbox needs: scoped signals
// (6), so that no command can signal the init or another command.
const minInitABI = 6

func init() {
	if len(os.Args) == 4 && os.Args[1] == initArg {
		os.Exit(initMain(os.Args[2], os.Args[3]))
	}
}

// initMain serves hitl on the socket fdArg until it closes it, then kills
// what is left and returns.
func initMain(fdArg, cfgJSON string) int {
	fd, err := strconv.Atoi(fdArg)
	if err != nil || fd < 3 {
		fmt.Fprintf(os.Stderr, "hitl sandbox init: bad socket %q\n", fdArg)
		return 126
	}
	// What hitl's executable (fd 3 under bwrap) and the socket are never
	// reach a command.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	// Not dumpable: a process of the same user cannot read its memory,
	// descriptors or environment, nor trace it.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	sk, err := newSock(fd)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hitl sandbox init: the socket: %v\n", err)
		return 126
	}
	in, err := newInit(cfgJSON)
	if err != nil {
		_ = sk.send(reply{Error: err.Error()}, nil)
		return 126
	}
	in.sock = sk
	// Ready while the first worker gets ready: a worker that cannot
	// (a PID namespace, the holder, the domain) says so to the command
	// it was for, and hitl falls back to a sandbox per command.
	in.done = make(chan struct{})
	in.spare()
	if err := in.send(reply{Ready: true}, nil); err != nil {
		return 126
	}
	// No command is read before ready is said: hitl, having heard
	// nothing by its deadline, may run the commands it sent elsewhere.
	go in.serve()
	<-in.done
	return 0
}

// sbInit is the init's state.
type sbInit struct {
	sock   *sock
	v      view
	scope  int               // a ruleset that scopes signals only: each command's domain
	filter []unix.SockFilter // the seccomp filter, nil for none
	keep   []int             // the capabilities a command keeps (as root)
	sendMu sync.Mutex        // one message at a time on fd
	// running counts the commands started and not yet ended.
	running atomic.Int64
	// idleMu orders a command counted in (next) and the look at /dev/shm
	// once the last has ended (ended).
	idleMu sync.Mutex
	// done is closed when hitl closes the socket (or it fails): the init
	// then exits, and every command's namespace ends with it.
	done chan struct{}
	// idle are the prepared workers waiting for a job, the last ready
	// last; sparing: a spare on its way, not yet claimed (poolMu).
	poolMu  sync.Mutex
	idle    []*worker
	sparing *worker
	// reuse: a worker starts command after command in its namespace,
	// its holder killing all each left (the holder may signal whatever
	// a command may become). Else each worker starts one command and
	// ends with its namespace.
	reuse bool
	// held: each worker's holder starts its commands (spawn_linux.go),
	// with the open-file limit nofile when not nil; else the worker's
	// thread does (start).
	held   bool
	nofile *unix.Rlimit
}

func newInit(cfgJSON string) (*sbInit, error) {
	var v view
	if err := json.Unmarshal([]byte(cfgJSON), &v); err != nil {
		return nil, fmt.Errorf("bad configuration: %w", err)
	}
	in := &sbInit{v: v}
	if v.FailStart {
		return nil, errors.New("failing on purpose (a test)")
	}
	if v.StallStart {
		time.Sleep(time.Hour) // until hitl's start timeout kills it
	}
	// The init itself is confined by the view's domain (every thread);
	// each command's thread adds a domain of its own inside it that only
	// scopes signals and abstract unix sockets, in which its holder runs,
	// and one more inside that for the command, so no command reaches the
	// init or its holder (domains above its own) nor another command (in
	// a sibling domain).
	if err := confine(v); err != nil {
		return nil, fmt.Errorf("cannot apply the Landlock domain: %w", err)
	}
	fd, err := ll.LandlockCreateRuleset(&ll.RulesetAttr{Scoped: ll.ScopeAbstractUnixSocket | ll.ScopeSignal}, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot make the scoping ruleset: %w", err)
	}
	in.scope = fd
	p := v.policy()
	if in.filter, err = commandFilter(p.unixSockets, v.Network, p.namespaces); err != nil {
		return nil, fmt.Errorf("cannot build the seccomp filter: %w", err)
	}
	// What a command's open-file limit is, before the filter: see
	// commandNofile.
	nofile, known := commandNofile(v)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("no_new_privs: %w", err)
	}
	if err := installFilter(in.filter, unix.SECCOMP_FILTER_FLAG_TSYNC); err != nil {
		return nil, fmt.Errorf("cannot install the seccomp filter: %w", err)
	}
	if p.writeAll {
		in.keep = seenCaps
	}
	in.reuse = os.Geteuid() != 0 || !slices.Contains(in.keep, unix.CAP_SETUID) || permitted(unix.CAP_KILL)
	in.held = holderSpawns && in.reuse && known && !v.ThreadSpawns
	in.nofile = nofile
	return in, nil
}

// commandNofile is the open-file limit a command starts with: the one the
// init was started with, which Go raised for the init alone (its own
// syscall.ForkExec gives it back to a child: a holder's child must set it
// itself). The init's limit is that one when Go left it as it was (soft
// at the hard limit: nil, nothing to set); inside bwrap, whose first
// process (the init's parent) keeps the limit it was given, it is that
// process's. Otherwise it cannot be known: known is false, and the
// worker's thread starts the commands (Go gives the limit back).
func commandNofile(v view) (lim *unix.Rlimit, known bool) {
	var own unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &own); err != nil {
		return nil, false
	}
	if own.Cur >= own.Max {
		return nil, true
	}
	if !v.InBwrap {
		return nil, false
	}
	var old unix.Rlimit
	if err := unix.Prlimit(os.Getppid(), unix.RLIMIT_NOFILE, nil, &old); err != nil || old.Max != own.Max {
		return nil, false
	}
	return &old, true
}

func (in *sbInit) send(r reply, fds []int) error {
	in.sendMu.Lock()
	defer in.sendMu.Unlock()
	return in.sock.send(r, fds)
}

// next reads the next request until one is a command to start, and
// counts it in; false when hitl closed the socket (or it failed), with
// done closed.
func (in *sbInit) next() (job, bool) {
	for {
		var req request
		files, err := in.sock.recv(&req)
		if err != nil {
			close(in.done)
			return job{}, false
		}
		if len(files) != 3 {
			closeAll(files)
			_ = in.send(reply{ID: req.ID, Error: "a command needs three descriptors"}, nil)
			continue
		}
		in.idleMu.Lock()
		if limit := in.v.MaxRunning; limit > 0 && in.running.Load() >= int64(limit) {
			in.idleMu.Unlock()
			closeAll(files)
			_ = in.send(reply{ID: req.ID, Error: fmt.Sprintf("too many commands at once in this sandbox (%d): wait for some to end", limit)}, nil)
			continue
		}
		in.running.Add(1)
		in.idleMu.Unlock()
		return job{req: req, files: files}, true
	}
}

// job is a command for a worker.
type job struct {
	req   request
	files []*os.File
	tries int // how many workers it was handed to before
}

// maxIdle is how many prepared workers a sandbox keeps waiting once more
// than that ran at once: each holds a thread and a holder.
const maxIdle = 4

// worker is a thread confined once (prepare) for the commands it starts,
// one at a time, in a PID namespace of its own whose first process, the
// holder, is already there; jobs hands it the next.
type worker struct {
	jobs chan job
}

// startWorker starts a worker, which prepares its thread and then waits
// for jobs.
func (in *sbInit) startWorker() *worker {
	w := &worker{jobs: make(chan job, 1)}
	go in.work(w)
	return w
}

// serve reads the requests (next) and hands each to a worker: the one
// that last ended a command, or a new one. A spare is kept ready, so a
// command that comes while all others run waits for no preparation.
// When hitl closes the socket it closes done, and the init exits.
func (in *sbInit) serve() {
	in.spare()
	for {
		j, ok := in.next()
		if !ok {
			return
		}
		in.poolMu.Lock()
		var w *worker
		if n := len(in.idle); n > 0 {
			w, in.idle = in.idle[n-1], in.idle[:n-1]
		} else if in.sparing != nil {
			w, in.sparing = in.sparing, nil // it takes the job once ready
		}
		in.poolMu.Unlock()
		if w == nil {
			w = in.startWorker()
		}
		w.jobs <- j
		in.spare()
	}
}

// spare starts a worker, which waits for a job once prepared, unless one
// waits already.
func (in *sbInit) spare() {
	in.poolMu.Lock()
	defer in.poolMu.Unlock()
	if len(in.idle) == 0 && in.sparing == nil {
		// It finds itself the spare only once poolMu is let go.
		in.sparing = in.startWorker()
	}
}

// work is the worker w's goroutine, locked to its thread: it prepares the
// thread, waits for a job, starts the command itself, says so with its
// pidfd, waits for it (through Go's poller: the thread sleeps, holding no
// system call), has the holder kill and wait for all the command left
// (sweep), and is ready for the next before it says how the command
// ended. The thread is never given back: a goroutine that ends locked ends
// its thread. Nothing in a command's namespace can name it.
func (in *sbInit) work(w *worker) {
	runtime.LockOSThread()
	holder, perr := in.prepare()
	// A spare no job claimed while it got ready waits with the others.
	in.poolMu.Lock()
	unclaimed := in.sparing == w
	if unclaimed {
		in.sparing = nil
		if perr == nil {
			in.idle = append(in.idle, w)
		}
	}
	in.poolMu.Unlock()
	if unclaimed && perr != nil {
		// No job is its: the command that comes gets a worker of its
		// own, which says why it cannot be.
		holder.end()
		holder.reap(nil)
		return
	}
	if perr == nil && holder.blk != nil {
		// Its holder starts its commands: the thread, confined, ends
		// (a goroutine that ends locked ends its thread).
		go in.drive(w, holder)
		return
	}
	for j := range w.jobs {
		if perr != nil {
			// A worker that cannot be: says so to the command it
			// was for (hitl falls back to a sandbox per command),
			// and ends.
			closeAll(j.files)
			in.finish(reply{ID: j.req.ID, Error: perr.Error(), Unprepared: true})
			holder.end()
			holder.reap(nil)
			return
		}
		if !in.run(holder, j, w) {
			return
		}
	}
}

// finish is the last word on a command. It counts the command out first:
// hitl may start the next as soon as it hears it.
func (in *sbInit) finish(r reply) {
	r.Spoiled = in.ended()
	_ = in.send(r, nil)
}

// run starts the command of j from this worker's thread, waits for it and
// for all it left, and says how it ended: true when the worker may start
// the next (its namespace holds only its holder again); false when the
// holder, and with it the worker, has ended.
func (in *sbInit) run(holder *holderProc, j job, w *worker) (again bool) {
	req := j.req
	stuck := func(pidfd int) { _ = in.send(reply{ID: req.ID, HolderStuck: true}, []int{pidfd}) }
	pid, err := in.start(req, j.files)
	closeAll(j.files)
	if err != nil {
		// Nothing started: the child that could not execute was
		// waited for, and the namespace holds the holder alone.
		return in.notStarted(w, holder, req.ID, err)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		// Killed with its namespace; waited for before the holder, whose
		// end waits for every process of the namespace to be.
		holder.end()
		waitPid(pid)
		holder.reap(stuck)
		in.finish(reply{ID: req.ID, Error: fmt.Sprintf("pidfd: %v", err)})
		return false
	}
	_ = in.send(reply{ID: req.ID, Started: true}, []int{pidfd})
	// The command's end is its pidfd's, whoever may wait for it: a
	// process that traces it (its own child) gets its exit first, and
	// wait4 would wait for that tracer. All the command left in its
	// namespace is killed first (the tracer with it), then it is waited
	// for. This thread, the command's parent, lives until then: a
	// command's parent-death signal (PR_SET_PDEATHSIG, bwrap's
	// --die-with-parent) follows its parent thread, not the process.
	endsWithin(pidfd, -1)
	unix.Close(pidfd)
	swept := in.reuse && holder.sweep()
	if !swept {
		holder.end()
	}
	ws := waitPid(pid)
	if swept {
		swept = in.keepWorker(w, holder)
	} else {
		holder.reap(stuck)
	}
	in.finish(reply{ID: req.ID, Exited: true, Status: uint32(ws)})
	return swept
}

// notStarted is the last word on a command that could not start (err,
// with its errno where it has one): whether w starts another.
func (in *sbInit) notStarted(w *worker, holder *holderProc, id uint64, err error) bool {
	r := reply{ID: id, Error: err.Error()}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		r.Errno = int(errno)
	}
	again := in.keepWorker(w, holder)
	in.finish(r)
	return again
}

// keepWorker puts w back with the workers waiting for a job, before its
// command's end is told (hitl's next request finds it there); with enough
// waiting already, it ends w's holder instead. Whether w starts another.
func (in *sbInit) keepWorker(w *worker, holder *holderProc) bool {
	in.poolMu.Lock()
	kept := len(in.idle) < maxIdle
	if kept {
		in.idle = append(in.idle, w)
	}
	in.poolMu.Unlock()
	if !kept {
		holder.end()
		holder.reap(nil)
	}
	return kept
}

// ended counts a command out, and says, for the last to end inside
// bwrap, whether it leaves /dev/shm spoiled: not empty (or not readable).
// That /dev/shm is the sandbox's own memory, which a sandbox per command
// let go with its command; what one left there would reach the next, and
// hold memory for the rest of the run. Nothing is removed here (a tree
// too deep to remove, or one the init may not enter, would defeat that):
// hitl ends the sandbox instead.
func (in *sbInit) ended() (spoiled bool) {
	in.idleMu.Lock()
	defer in.idleMu.Unlock()
	return in.running.Add(-1) == 0 && in.v.InBwrap && !emptyDir("/dev/shm")
}

// emptyDir says whether dir can be read and holds nothing.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err == io.EOF
}

// permitted says whether this thread's permitted set holds c.
func permitted(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Permitted&(1<<(c%32)) != 0
}

func waitPid(pid int) syscall.WaitStatus {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	return ws
}

// prepare confines this thread for the commands it starts: no_new_privs, a
// new PID namespace for its children whose first process is a holder
// (startHolder: when a command ends, the holder kills everything it left,
// setsid or not, and waits for it; when the holder ends, the kernel ends
// the namespace), the capabilities of the class (CAP_KILL for the holder
// alone), and a Landlock domain of its own, in which the holder starts;
// then one more domain inside that one, the commands', so that no command
// can trace or signal its holder. What the thread holds, the command
// inherits (and the init's seccomp filter).
func (in *sbInit) prepare() (holder *holderProc, err error) {
	holder = &holderProc{pidfd: -1, life: -1}
	if in.v.FailPrepare {
		return holder, errors.New("failing on purpose (a test)")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return holder, fmt.Errorf("no_new_privs: %w", err)
	}
	// This thread's children start in a new PID namespace.
	if err := unix.Unshare(unix.CLONE_NEWPID); err != nil {
		return holder, fmt.Errorf("a PID namespace: %w", err)
	}
	// The holder alone keeps CAP_KILL, where the thread has it: it kills
	// what a command that changed its user left.
	dropKill, err := threadCaps(in.keep, unix.CAP_KILL)
	if err != nil {
		return holder, err
	}
	if err := ll.LandlockRestrictSelf(in.scope, 0); err != nil {
		return holder, fmt.Errorf("the Landlock domain: %w", err)
	}
	if holder, err = in.startHolder(in.held); err != nil {
		return holder, fmt.Errorf("the PID namespace's first process: %w", err)
	}
	if err := dropKill(); err != nil {
		holder.end()
		holder.reap(nil)
		return holder, err
	}
	if err := ll.LandlockRestrictSelf(in.scope, 0); err != nil {
		holder.end()
		holder.reap(nil)
		return holder, fmt.Errorf("the command's Landlock domain: %w", err)
	}
	if b := holder.blk; b != nil {
		// What the thread now holds, the holder's children take.
		err := b.takeCaps()
		if err == nil {
			err = holder.watchLifeline()
		}
		if err != nil {
			holder.end()
			holder.reap(nil)
			return holder, fmt.Errorf("the command's holder: %w", err)
		}
	}
	return holder, nil
}

// start starts the command, from the prepared thread, in a new session:
// the second process of the thread's PID namespace.
func (in *sbInit) start(req request, files []*os.File) (pid int, err error) {
	fds := []uintptr{files[0].Fd(), files[1].Fd(), files[2].Fd()}
	// No parent-death signal: the PID namespace ends with its holder,
	// which dies with this thread or the init.
	attr := &syscall.ProcAttr{Dir: req.Dir, Env: req.Env, Files: fds, Sys: &syscall.SysProcAttr{Setsid: true}}
	return syscall.ForkExec(req.Prog, req.Argv, attr)
}

// threadCaps leaves this thread the capabilities a command keeps: keep as
// root (none otherwise), in the bounding, inheritable and ambient sets, so
// what it executes has no more; and extra, where the thread has it, in its
// effective and permitted sets alone, until drop (what the thread starts
// before that keeps it; nothing it executes gains it). It must run on the
// thread that executes.
func threadCaps(keep []int, extra ...int) (drop func() error, err error) {
	drop = func() error { return nil }
	if os.Geteuid() != 0 {
		keep = nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return drop, fmt.Errorf("capget: %w", err)
	}
	has := func(set [2]uint32, c int) bool { return set[c/32]&(1<<(c%32)) != 0 }
	eff := [2]uint32{data[0].Effective, data[1].Effective}
	perm := [2]uint32{data[0].Permitted, data[1].Permitted}
	if eff == [2]uint32{} && perm == [2]uint32{} {
		return drop, nil // nothing to give away
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	kept := map[int]bool{}
	for _, c := range keep {
		kept[c] = true
	}
	if has(eff, unix.CAP_SETPCAP) {
		for c := 0; c <= lastCap(); c++ {
			if !kept[c] {
				if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
					return drop, fmt.Errorf("dropping capability %d: %w", c, err)
				}
			}
		}
	}
	var want [2]uint32
	set := func(s *[2]uint32, c int) { s[c/32] |= 1 << (c % 32) }
	for _, c := range keep {
		if has(perm, c) {
			set(&want, c)
		}
	}
	capset := func(held [2]uint32) error {
		for i := range data {
			data[i].Effective = held[i]
			data[i].Permitted = held[i]
			data[i].Inheritable = want[i]
		}
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return fmt.Errorf("capset: %w", err)
		}
		return nil
	}
	held := want
	for _, c := range extra {
		if has(perm, c) {
			set(&held, c)
		}
	}
	if err := capset(held); err != nil {
		return drop, err
	}
	for _, c := range keep {
		if has(want, c) {
			if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, uintptr(c), 0, 0); err != nil {
				return drop, fmt.Errorf("ambient capability %d: %w", c, err)
			}
		}
	}
	if held == want {
		return drop, nil
	}
	return func() error { return capset(want) }, nil
}
