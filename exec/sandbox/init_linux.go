package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// initArg is argv[1] of the per-run sandbox's init (DESIGN §15): a re-exec
// of hitl, inside bwrap or in a PID namespace of its own, that starts each
// command hitl sends it over a socketpair. Each command is started from a
// thread of its own, locked and never given back, that first confines
// itself alone (no_new_privs, capabilities, the seccomp filter, a fresh
// Landlock domain from the ruleset built once): the command inherits that
// thread's confinement, the init keeps none of it.
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
	in, err := newInit(cfgJSON)
	if err != nil {
		_ = sendMsg(fd, reply{Error: err.Error()}, nil)
		return 126
	}
	in.fd = fd
	if err := in.send(reply{Ready: true}, nil); err != nil {
		return 126
	}
	in.serve()
	return 0
}

// sbInit is the init's state.
type sbInit struct {
	fd      int
	v       view
	ruleset int               // the Landlock ruleset, applied anew per command
	filter  []unix.SockFilter // the seccomp filter, nil for none
	keep    []int             // the capabilities a command keeps (as root)
	sendMu  sync.Mutex        // one message at a time on fd
	mu      sync.Mutex        // guards running
	running map[int]bool      // pids of commands not yet waited for
}

func newInit(cfgJSON string) (*sbInit, error) {
	var v view
	if err := json.Unmarshal([]byte(cfgJSON), &v); err != nil {
		return nil, fmt.Errorf("bad configuration: %w", err)
	}
	in := &sbInit{v: v, running: map[int]bool{}}
	fd, err := rulesetOf(v)
	if err != nil {
		return nil, fmt.Errorf("cannot build the Landlock ruleset: %w", err)
	}
	in.ruleset = fd
	p := v.policy()
	if in.filter, err = socketFilter(p.unixSockets, v.Network, p.namespaces); err != nil {
		return nil, fmt.Errorf("cannot build the socket filter: %w", err)
	}
	if p.writeAll {
		in.keep = seenCaps
	}
	// Each command is the first process of a PID namespace of its own:
	// what it starts ends with it, and it cannot name the init, another
	// command, or the thread that started it (which ends at once).
	if !initPidNS() {
		return nil, errors.New("a command cannot start in a PID namespace of its own here")
	}
	return in, nil
}

// initPidNS says whether this process may start a child in a new PID
// namespace (it holds CAP_SYS_ADMIN in its user namespace).
func initPidNS() bool {
	attr := &syscall.SysProcAttr{Setsid: true, Cloneflags: syscall.CLONE_NEWPID}
	_, err := syscall.ForkExec("/nonexistent/hitl-pidns-probe", []string{"probe"}, &syscall.ProcAttr{Sys: attr})
	return errors.Is(err, syscall.ENOENT)
}

func (in *sbInit) send(r reply, fds []int) error {
	in.sendMu.Lock()
	defer in.sendMu.Unlock()
	return sendMsg(in.fd, r, fds)
}

// serve starts each request's command until hitl closes the socket (or
// it fails), then kills every command left: their PID namespaces end with
// them.
func (in *sbInit) serve() {
	for {
		var req request
		files, err := recvMsg(in.fd, &req)
		if err != nil {
			break
		}
		if len(files) != 3 {
			closeAll(files)
			_ = in.send(reply{ID: req.ID, Error: "a command needs three descriptors"}, nil)
			continue
		}
		go in.run(req, files)
	}
	in.mu.Lock()
	for pid := range in.running {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	in.mu.Unlock()
}

// run starts req's command from a thread confined for it alone, says so
// with its pidfd, waits for it and says how it ended.
func (in *sbInit) run(req request, files []*os.File) {
	waitFor := make(chan int, 1)
	go func() {
		// This thread is confined for the command; it is never given
		// back (a goroutine that ends locked ends its thread).
		runtime.LockOSThread()
		pid, err := in.start(req, files)
		closeAll(files)
		if err != nil {
			r := reply{ID: req.ID, Error: err.Error()}
			var errno syscall.Errno
			if errors.As(err, &errno) {
				r.Errno = int(errno)
			}
			_ = in.send(r, nil)
			waitFor <- 0
			return
		}
		in.mu.Lock()
		in.running[pid] = true
		in.mu.Unlock()
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			in.reap(pid)
			_ = in.send(reply{ID: req.ID, Error: fmt.Sprintf("pidfd: %v", err)}, nil)
			waitFor <- 0
			return
		}
		_ = in.send(reply{ID: req.ID, Started: true}, []int{pidfd})
		unix.Close(pidfd)
		// The thread ends here: nothing of the init stays in the
		// command's domain.
		waitFor <- pid
	}()
	if pid := <-waitFor; pid != 0 {
		in.wait(req.ID, pid)
	}
}

// reap waits for pid and forgets it, returning its wait status.
func (in *sbInit) reap(pid int) syscall.WaitStatus {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	in.mu.Lock()
	delete(in.running, pid)
	in.mu.Unlock()
	return ws
}

func (in *sbInit) wait(id uint64, pid int) {
	ws := in.reap(pid)
	_ = in.send(reply{ID: id, Exited: true, Status: uint32(ws)}, nil)
}

// start confines this thread for the command and starts it in a new
// session (and PID namespace): what the thread holds, the command
// inherits.
func (in *sbInit) start(req request, files []*os.File) (int, error) {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("no_new_privs: %w", err)
	}
	if err := threadCaps(in.keep); err != nil {
		return 0, err
	}
	if in.filter != nil {
		if err := installFilter(in.filter, 0); err != nil {
			return 0, fmt.Errorf("the socket filter: %w", err)
		}
	}
	if err := ll.LandlockRestrictSelf(in.ruleset, 0); err != nil {
		return 0, fmt.Errorf("the Landlock domain: %w", err)
	}
	// No parent-death signal: it would follow this thread, which ends
	// now; the command's PID namespace ends with the init's.
	sys := &syscall.SysProcAttr{Setsid: true, Cloneflags: syscall.CLONE_NEWPID}
	fds := []uintptr{files[0].Fd(), files[1].Fd(), files[2].Fd()}
	return syscall.ForkExec(req.Prog, req.Argv, &syscall.ProcAttr{Dir: req.Dir, Env: req.Env, Files: fds, Sys: sys})
}

// threadCaps leaves this thread the capabilities a command keeps: keep as
// root (none otherwise), in the bounding, inheritable and ambient sets, so
// what it executes has no more; CAP_SYS_ADMIN stays effective only to make
// the PID namespace (clone), and goes with the exec.
func threadCaps(keep []int) error {
	if os.Geteuid() != 0 {
		keep = nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	has := func(set [2]uint32, c int) bool { return set[c/32]&(1<<(c%32)) != 0 }
	eff := [2]uint32{data[0].Effective, data[1].Effective}
	perm := [2]uint32{data[0].Permitted, data[1].Permitted}
	if eff == [2]uint32{} && perm == [2]uint32{} {
		return nil // nothing to give away
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	kept := map[int]bool{}
	for _, c := range keep {
		kept[c] = true
	}
	if has(eff, unix.CAP_SETPCAP) {
		for c := 0; c <= unix.CAP_LAST_CAP; c++ {
			if !kept[c] {
				if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
					return fmt.Errorf("dropping capability %d: %w", c, err)
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
	effective := want
	if has(perm, unix.CAP_SYS_ADMIN) {
		set(&effective, unix.CAP_SYS_ADMIN)
	}
	for i := range data {
		data[i].Effective = effective[i]
		data[i].Permitted = effective[i]
		data[i].Inheritable = want[i]
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	for _, c := range keep {
		if has(want, c) {
			if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, uintptr(c), 0, 0); err != nil {
				return fmt.Errorf("ambient capability %d: %w", c, err)
			}
		}
	}
	return nil
}

// rulesetOf builds the view's Landlock ruleset (domainRules, TCP refused
// without the network, signals and abstract unix sockets scoped), for the
// init to apply to each command's thread: it needs ABI 6.
func rulesetOf(v view) (int, error) {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < minInitABI {
		return -1, fmt.Errorf("the kernel's Landlock ABI is %d, below %d (scoped signals)", abi, minInitABI)
	}
	attr := ll.RulesetAttr{
		HandledAccessFS: uint64(writeRights | noDevices),
		Scoped:          ll.ScopeAbstractUnixSocket | ll.ScopeSignal,
	}
	if !v.Network {
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	for _, r := range domainRules(v) {
		pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			unix.Close(fd)
			return -1, fmt.Errorf("%s: %w", r.path, err)
		}
		var st unix.Stat_t
		access := uint64(r.access)
		if unix.Fstat(pfd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= uint64(fileRights | ioctlDev)
		}
		err = ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{AllowedAccess: access, ParentFd: pfd}, 0)
		unix.Close(pfd)
		if err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("a rule for %s: %w", r.path, err)
		}
	}
	return fd, nil
}
