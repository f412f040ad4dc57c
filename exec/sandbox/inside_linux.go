package sandbox

import (
	"errors"
	"os"
	"syscall"

	"github.com/hitl-dev/hitl/internal/procgroup"
)

// insideProcs are the host pids of every process inside the namespace of
// bwrap (pid outer) but its init: the program bwrap started and all it
// started in turn. The program shares its group with the init (bwrap's
// --new-session makes the init the session's leader), so a signal to a
// group would reach the init too, and the init dying ends the namespace
// at once: each process is signalled on its own.
func insideProcs(outer int) []int {
	parents := procgroup.Parents()
	children := map[int][]int{}
	for pid, ppid := range parents {
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	for _, init := range children[outer] {
		queue := append([]int(nil), children[init]...)
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			out = append(out, pid)
			queue = append(queue, children[pid]...)
		}
	}
	return out
}

// procAttr starts a child in a new session (no controlling terminal, its
// own process group), killed if hitl dies without stopping it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// pidnsAttr makes a child start in a new PID namespace (root only).
func pidnsAttr(a *syscall.SysProcAttr) { a.Cloneflags = syscall.CLONE_NEWPID }

// pidnsWorks says whether the kernel lets hitl start a child in a new PID
// namespace: a fork that execs nothing (the path does not exist) fails
// with the clone's error, or with ENOENT once the namespace was made.
//
// Only root: a user namespace's id maps are written by the parent, the
// Landlock helper, which may not write /proc. A user whose machine lacks
// bwrap is told so (Why).
func pidnsWorks() bool {
	if os.Geteuid() != 0 {
		return false
	}
	attr := &syscall.SysProcAttr{Setsid: true}
	pidnsAttr(attr)
	_, err := syscall.ForkExec("/nonexistent/hitl-pidns-probe", []string{"probe"}, &syscall.ProcAttr{Sys: attr})
	return errors.Is(err, syscall.ENOENT)
}
