package sandbox

import (
	"syscall"

	"github.com/hitl-dev/hitl/internal/procgroup"
)

// insideGroups are the host pids of the programs bwrap (pid outer) started:
// the children of its namespace's init, each the leader of its group.
func insideGroups(outer int) []int {
	parents := procgroup.Parents()
	var out []int
	for pid, ppid := range parents {
		if parents[ppid] == outer && ppid != outer {
			out = append(out, pid)
		}
	}
	return out
}

// procAttr starts a child in a new session (no controlling terminal, its
// own process group), killed if hitl dies without stopping it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
