package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// insideGroups are the host pids of the programs bwrap (pid outer) started:
// the children of its namespace's init, each the leader of its group.
func insideGroups(outer int) []int {
	parents := map[int]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and ")".
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(string(f[1])); err == nil {
			parents[pid] = ppid
		}
	}
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
