package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// filterSockets installs a seccomp filter on every thread of this process,
// inherited by what it executes: socket(2) makes a unix socket only when
// unixOK (a read-only mount and Landlock's rights do not stop connecting
// to a listener by path), and a socket of another family but netlink only
// when netOK (UDP too, which Landlock's network rights do not cover).
// io_uring, which makes sockets without socket(2), is refused whenever a
// family is; another architecture's calls (x32's, i386's socketcall) end
// the program. Refusals are EACCES, as a file system refusal would be.
//
// A child without namespacesOK cannot make a user or mount namespace
// (unshare, clone; clone3, whose flags a filter cannot read, says ENOSYS
// so that libc falls back to clone).
func filterSockets(unixOK, netOK, namespacesOK bool) error {
	prog, err := socketFilter(unixOK, netOK, namespacesOK)
	if err != nil || prog == nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	return installFilter(prog, unix.SECCOMP_FILTER_FLAG_TSYNC)
}

// installFilter installs prog with flags: SECCOMP_FILTER_FLAG_TSYNC for
// every thread of the process, 0 for the calling thread only (the per-run
// sandbox's init, whose thread then starts one command). The thread must
// have no_new_privs set.
func installFilter(prog []unix.SockFilter, flags uintptr) error {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return errno
	}
	return nil
}

// socketFilter is filterSockets' program, nil when nothing is refused.
func socketFilter(unixOK, netOK, namespacesOK bool) ([]unix.SockFilter, error) {
	if unixOK && netOK && namespacesOK {
		return nil, nil
	}
	return buildFilter(unixOK, netOK, namespacesOK, false)
}

// commandFilter is the program of a command the run's sandbox starts
// (DESIGN §15): socketFilter's, and always what would reach past the
// init, its parent: clone(CLONE_PARENT) (a child of the init, outside the
// command's PID namespace) and ptrace(PTRACE_TRACEME) (the init's thread
// its tracer) are refused (EPERM), and clone3, whose flags a filter cannot
// read, says ENOSYS (libc and Go fall back to clone); and changing pid 1,
// the command's holder, which outlives it (its limits, CPUs, scheduling
// and priority; setpriority and ioprio_set for a whole user), is refused
// (EPERM).
func commandFilter(unixOK, netOK, namespacesOK bool) ([]unix.SockFilter, error) {
	return buildFilter(unixOK, netOK, namespacesOK, true)
}

// ioprio_set's which: a process, every process of a user.
const (
	ioprioWhoProcess = 1
	ioprioWhoUser    = 3
)

func buildFilter(unixOK, netOK, namespacesOK, underInit bool) ([]unix.SockFilter, error) {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil, fmt.Errorf("no socket filter for %s", runtime.GOARCH)
	}
	const (
		retAllow = unix.SECCOMP_RET_ALLOW
		retDeny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		offNr    = 0
		offArch  = 4
		offArg0  = 16 // args[0], its low 32 bits (little endian)
		offArg1  = 24 // args[1], its low 32 bits
		offArg3  = 40 // args[3], its low 32 bits
	)
	verdict := func(ok bool) uint32 {
		if ok {
			return retAllow
		}
		return retDeny
	}
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	// ifNot skips the next instruction unless A == k.
	ifNot := func(k uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: 0, Jf: 1}
	}
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	prog := []unix.SockFilter{
		ld(offArch),
		// Another architecture's calls (a 32-bit program's socketcall)
		// end the program at once: refusing them all would leave it
		// unable even to exit.
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: arch, Jt: 1, Jf: 0}, ret(unix.SECCOMP_RET_KILL_PROCESS),
		ld(offNr),
		{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: 0x40000000, Jt: 0, Jf: 1}, ret(unix.SECCOMP_RET_KILL_PROCESS), // x32
	}
	if !unixOK || !netOK {
		prog = append(prog, ifNot(unix.SYS_IO_URING_SETUP), ret(retDeny))
	}
	if underInit {
		retPerm := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		prog = append(prog,
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_CLONE, Jt: 0, Jf: 3},
			ld(offArg0),
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: unix.CLONE_PARENT, Jt: 0, Jf: 1},
			ret(retPerm),
			ld(offNr),
			// ptrace: PTRACE_TRACEME, and PTRACE_O_TRACEEXIT set by
			// PTRACE_SEIZE, PTRACE_SETOPTIONS or the old x86
			// request 21 (a tracee stops at its exit even after
			// SIGKILL: two processes tracing each other so would
			// never end).
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_PTRACE, Jt: 0, Jf: 8},
			ld(offArg0),
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.PTRACE_TRACEME, Jt: 5, Jf: 0},
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.PTRACE_SEIZE, Jt: 2, Jf: 0},
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.PTRACE_SETOPTIONS, Jt: 1, Jf: 0},
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: 21, Jt: 0, Jf: 3}, // PTRACE_OLDSETOPTIONS
			ld(offArg3),
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: unix.PTRACE_O_TRACEEXIT, Jt: 0, Jf: 1},
			ret(retPerm),
			ld(offNr),
			ifNot(unix.SYS_CLONE3), ret(unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS)),
		)
		// The holder is pid 1 of the command's namespace, and outlives
		// the command (its worker's next command has it too): no
		// command changes its limits, CPUs or scheduling, which
		// Landlock does not guard (EPERM). The user-wide forms would
		// reach it as well.
		for _, nr := range []uint32{unix.SYS_PRLIMIT64, unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_SETSCHEDULER, unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_SETATTR} {
			prog = append(prog,
				unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jt: 0, Jf: 3},
				ld(offArg0),
				unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: 1, Jt: 0, Jf: 1},
				ret(retPerm),
				ld(offNr),
			)
		}
		// setpriority(which, who) and ioprio_set(which, who): pid 1, or
		// every process of a user.
		for _, c := range []struct{ nr, process, user uint32 }{
			{unix.SYS_SETPRIORITY, unix.PRIO_PROCESS, unix.PRIO_USER},
			{unix.SYS_IOPRIO_SET, ioprioWhoProcess, ioprioWhoUser},
		} {
			prog = append(prog,
				unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: c.nr, Jt: 0, Jf: 6},
				ld(offArg0),
				unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: c.user, Jt: 3, Jf: 0},
				unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: c.process, Jt: 0, Jf: 3},
				ld(offArg1),
				unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: 1, Jt: 0, Jf: 1},
				ret(retPerm),
				ld(offNr),
			)
		}
	}
	if !namespacesOK {
		const mask = unix.CLONE_NEWUSER | unix.CLONE_NEWNS
		for _, nr := range []uint32{unix.SYS_UNSHARE, unix.SYS_CLONE} {
			prog = append(prog,
				unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jt: 0, Jf: 3},
				ld(offArg0),
				unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: mask, Jt: 0, Jf: 1},
				ret(retDeny),
				ld(offNr),
			)
		}
		prog = append(prog, ifNot(unix.SYS_CLONE3), ret(unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS)))
	}
	prog = append(prog,
		unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_SOCKET, Jt: 1, Jf: 0}, ret(retAllow),
		ld(offArg0),
		ifNot(unix.AF_UNIX), ret(verdict(unixOK)),
		ifNot(unix.AF_NETLINK), ret(retAllow),
		ret(verdict(netOK)),
	)
	return prog, nil
}
