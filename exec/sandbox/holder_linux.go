package sandbox

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The holder is the first process of each worker's PID namespace (the
// commands the worker starts, one at a time, come after it): it does
// nothing until the init writes a byte on its lifeline — a socket whose
// other end only the init holds — when a command has ended: then it kills
// every other process of the namespace, waits until none is left, and
// writes the byte back (sweep). The lifeline's end (the init closes it, or
// ends, however) ends the holder, which ends the namespace and all it
// held. On amd64 it is a clone of the init that shares the init's memory
// (CLONE_VM: no exec, no copy of the memory, no new address space to make
// and tear down) and runs, on a stack of its own, a few system calls
// (cloneHolder). Elsewhere the holder is a fork of the init (forkHolder).
//
// A holder that shares the init's memory is kept out of its commands'
// reach as the init is: the command's Landlock domain is nested inside the
// holder's (prepare), so it can neither trace nor signal it, whatever its
// capabilities, and the memory is not dumpable.

// holderStack is the size of a cloned holder's stack: it keeps a few
// words.
const holderStack = 4096

// holderProc is a worker's holder: its pid, its lifeline's end (the
// init's alone; -1 once closed), and the stack a cloned one runs on.
type holderProc struct {
	pid   int
	pidfd int // -1 for none
	life  int
	stack []byte
	// blk: for a holder that starts its worker's commands, what the next
	// is (in stack's mapping), and the lifeline through Go's poller.
	blk *spawnBlock
	lf  *os.File
	lrc syscall.RawConn
}

// holderGrace is how long a holder whose lifeline was closed may take to
// end before hitl is asked to kill it: one stopped (SIGSTOP from outside
// the sandbox: no command can) would otherwise hold its namespace, and
// the command's end, for ever.
const holderGrace = 2 * time.Second

// end ends the holder, and with it its PID namespace, without waiting:
// its lifeline closed, it reads the end and exits, and the kernel ends
// all the namespace held. No signal: the thread that starts the command
// is in the command's domain, which cannot signal the holder.
func (h *holderProc) end() {
	if h.lf != nil {
		h.lf.Close()
		h.lf, h.life = nil, -1
	}
	if h.life >= 0 {
		unix.Close(h.life)
		h.life = -1
	}
}

// sweep has the holder kill what a command left in the namespace (its
// children, setsid or not, and whatever it traced) and wait until none of
// it is left: true once it says so. False when it does not within
// holderGrace (a process that cannot end, or a stopped holder): the
// worker then ends the holder, and its namespace, as it would without
// sweeps.
func (h *holderProc) sweep() bool {
	if h.life < 0 {
		return false
	}
	b := []byte{1}
	for {
		n, err := unix.Write(h.life, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n != 1 {
			return false
		}
		break
	}
	if !pollEnds(h.life, holderGrace) {
		return false
	}
	for {
		n, err := unix.Read(h.life, b)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 1
	}
}

// reap waits for the ended holder (its namespace gone with it), then
// releases its stack. A holder not gone within holderGrace is handed to
// ask (its pidfd), for hitl to kill: this thread, in the command's domain,
// cannot signal it, and hitl is outside every domain. The wait is poll(2)'s
// on this thread, not the poller's: a holder whose lifeline closed ends in
// microseconds, and the poller's wake-up, handed to this locked thread,
// cost more than that on the way of every command's end.
func (h *holderProc) reap(ask func(pidfd int)) {
	if h.pid > 0 {
		if h.pidfd >= 0 && ask != nil && !pollEnds(h.pidfd, holderGrace) {
			ask(h.pidfd)
		}
		waitPid(h.pid)
		h.pid = 0
	}
	if h.pidfd >= 0 {
		unix.Close(h.pidfd)
		h.pidfd = -1
	}
	h.release()
}

// endsWithin says whether the process of pidfd ends within d (d < 0:
// waits until it does). It waits through Go's poller, holding no thread in
// a system call (see sock); where the poller cannot take the pidfd, or the
// deadline passed before a first look, in poll(2) for what is left.
func endsWithin(pidfd int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	if ended, ok := pollerEnds(pidfd, deadline, d >= 0); ok {
		return ended
	}
	left := time.Duration(-1)
	if d >= 0 {
		left = max(time.Until(deadline), 0)
	}
	return pollEnds(pidfd, left)
}

// pollerEnds is endsWithin through Go's poller, on a non-blocking copy of
// pidfd (until deadline when timed); ok is false when the poller could not
// answer.
func pollerEnds(pidfd int, deadline time.Time, timed bool) (ended, ok bool) {
	dup, err := unix.FcntlInt(uintptr(pidfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return false, false
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return false, false
	}
	f := os.NewFile(uintptr(dup), "pidfd")
	defer f.Close()
	if timed && f.SetReadDeadline(deadline) != nil {
		return false, false // not pollable here
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	err = rc.Read(func(fd uintptr) bool {
		ended = pollEnds(int(fd), 0)
		return ended
	})
	return ended, err == nil
}

// pollEnds is endsWithin in poll(2) (d 0: whether it has ended now).
func pollEnds(pidfd int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		timeout := -1
		if d == 0 {
			timeout = 0
		} else if d > 0 {
			left := time.Until(deadline)
			if left <= 0 {
				return false
			}
			timeout = int(left.Milliseconds()) + 1
		}
		n, err := unix.Poll(fds, timeout)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return err == nil
		}
		if d == 0 {
			return false
		}
	}
}

// release unmaps a cloned holder's stack: only once it has been waited
// for (or never ran).
func (h *holderProc) release() {
	if h.pid == 0 && h.stack != nil {
		h.blk = nil
		_ = unix.Munmap(h.stack)
		h.stack = nil
	}
}

// startHolder starts the first process of the PID namespace this thread's
// children start in, with the read end of a lifeline of its own as its
// only descriptor. It ends when the init closes the write end (end) or
// ends, however. (No parent-death signal: the thread it would come from
// is then in the command's domain, which may not signal the holder.)
func (in *sbInit) startHolder(spawns bool) (*holderProc, error) {
	h := &holderProc{pidfd: -1, life: -1}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return h, fmt.Errorf("the holder's lifeline: %w", err)
	}
	defer unix.Close(pair[1])
	h.life = pair[0]
	// The holder runs no Go: every signal stays blocked in it.
	var all, old unix.Sigset_t
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &all, &old); err != nil {
		h.end()
		return h, fmt.Errorf("signal mask: %w", err)
	}
	defer func() { _ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil) }()
	if !canCloneHolder {
		pid, errno := forkHolder(pair[1])
		if errno != 0 {
			h.end()
			return h, errno
		}
		h.pid = pid
		h.pidfd = pidfdOr(pid)
		return h, nil
	}
	size := holderStack
	if spawns {
		size = spawnMapping
	}
	h.stack, err = unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_STACK)
	if err != nil {
		h.end()
		return h, fmt.Errorf("the holder's stack: %w", err)
	}
	base := uintptr(unsafe.Pointer(&h.stack[0]))
	top, blk := base+holderStack, uintptr(0)
	if spawns {
		h.blk = (*spawnBlock)(unsafe.Pointer(&h.stack[0]))
		h.blk.cstack = base + spawnMapping
		h.blk.wire()
		if in.nofile != nil {
			h.blk.nofile, h.blk.setNofile = *in.nofile, 1
		}
		top, blk = base+2*holderStack, base
	}
	pid, errno := cloneHolder(top, int32(pair[1]), blk)
	if errno != 0 {
		h.end()
		h.release()
		return h, syscall.Errno(errno)
	}
	h.pid = int(pid)
	h.pidfd = pidfdOr(h.pid)
	return h, nil
}

// pidfdOr is a pidfd of pid, or -1 (the holder is then waited for as it
// is, with no grace).
func pidfdOr(pid int) int {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1
	}
	return fd
}

// holderName is the holder's name (comm), NUL-terminated.
var holderName = [...]byte{'h', 'i', 't', 'l', '-', 'p', 'i', 'd', 'n', 's', 0}

// forkHolder forks this process: the child, the first process of the PID
// namespace this thread's children start in, does what cloneHolder's does
// (so the command is an ordinary process, its signals and SIGPIPE as
// anywhere, not a namespace's init): it waits for its lifeline and reaps
// orphans; a byte on the lifeline has it kill the rest of the namespace,
// wait until none is left and write the byte back; the lifeline's end
// ends it. The child runs only this function after the fork, raw system
// calls on its own copy of the stack, with every signal blocked (the
// caller's mask): no Go runtime, no allocation.
//
//go:nosplit
//go:norace
func forkHolder(lifeline int) (pid int, errno syscall.Errno) {
	r1, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	if r1 != 0 {
		return int(r1), 0
	}
	// It holds no descriptor but its lifeline: not the command's pipes
	// (their reader would never see the end), nor the socket to hitl.
	syscall.RawSyscall6(unix.SYS_CLOSE_RANGE, 0, uintptr(lifeline-1), 0, 0, 0, 0)
	syscall.RawSyscall6(unix.SYS_CLOSE_RANGE, uintptr(lifeline+1), ^uintptr(0), 0, 0, 0, 0)
	// Named for what it is (ps, and the probe that looks for the init).
	syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&holderName[0])), 0, 0, 0, 0)
	// Every orphan of the command is handed to it: each that ends is
	// waited for (its SIGCHLD, blocked, read from a signalfd).
	mask := uint64(1) << (syscall.SIGCHLD - 1)
	sfd, _, e := syscall.RawSyscall6(unix.SYS_SIGNALFD4, ^uintptr(0), uintptr(unsafe.Pointer(&mask)), 8, unix.SFD_NONBLOCK, 0, 0)
	var b [1]byte
	for {
		if e == 0 {
			fds := [2]unix.PollFd{{Fd: int32(lifeline), Events: unix.POLLIN}, {Fd: int32(sfd), Events: unix.POLLIN}}
			n, _, pe := syscall.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 2, 0, 0, 0, 0)
			switch {
			case pe == syscall.EINTR:
				continue
			case pe != 0 || n == 0:
				e = pe // the lifeline alone from now on
			case fds[0].Revents == 0:
				var info [128]byte
				syscall.RawSyscall(syscall.SYS_READ, sfd, uintptr(unsafe.Pointer(&info[0])), uintptr(len(info)))
				for {
					pid, _, _ := syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), 0, syscall.WNOHANG|unix.WALL, 0, 0, 0)
					if int(pid) <= 0 {
						break
					}
				}
				continue
			}
		}
		n, _, re := syscall.RawSyscall(syscall.SYS_READ, uintptr(lifeline), uintptr(unsafe.Pointer(&b[0])), 1)
		if re == syscall.EINTR {
			continue
		}
		if re != 0 || n != 1 {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
		}
		// kill -1: every process of the namespace but the holder.
		syscall.RawSyscall(syscall.SYS_KILL, ^uintptr(0), uintptr(syscall.SIGKILL), 0)
		for {
			pid, _, we := syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), 0, unix.WALL, 0, 0, 0)
			if int(pid) <= 0 && we != syscall.EINTR {
				break
			}
		}
		for {
			n, _, we := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(lifeline), uintptr(unsafe.Pointer(&b[0])), 1)
			if we == syscall.EINTR {
				continue
			}
			if we != 0 || n != 1 {
				syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
			}
			break
		}
	}
}
