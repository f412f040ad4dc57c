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
	alive := false
	if !each(func(p Proc) bool {
		if p.Pgrp == pgid && !p.Zombie {
			alive = true
		}
		return !alive
	}) {
		return true // /proc cannot be read: assume it is
	}
	return alive
}

// Proc is what /proc/PID/stat says of a process.
type Proc struct {
	Pid, PPid, Pgrp int
	Zombie          bool // a zombie or dead process: it runs no more
}

// Parents maps each process to its parent.
func Parents() map[int]int {
	out := map[int]int{}
	each(func(p Proc) bool {
		out[p.Pid] = p.PPid
		return true
	})
	return out
}

// each calls fn for every process until fn returns false; false when
// /proc cannot be read.
func each(fn func(Proc) bool) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
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
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ")".
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgrp, _ := strconv.Atoi(string(f[2]))
		if !fn(Proc{Pid: pid, PPid: ppid, Pgrp: pgrp, Zombie: f[0][0] == 'Z' || f[0][0] == 'X'}) {
			break
		}
	}
	return true
}
