// Package procgroup tells whether a process group still has a live member:
// what stopping a shell command or an MCP server waits for.
package procgroup

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// Alive reports whether process group pgid has a member that is not a
// zombie. Zombies count as gone: orphans are reaped by init, which in a
// container may never happen (hitl can even be PID 1), and they cannot run.
func Alive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ")".
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 3 || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			return true
		}
	}
	return false
}
