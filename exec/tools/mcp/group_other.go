//go:build unix && !linux

package mcp

import "syscall"

func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// groupAlive reports whether process group pgid has a member (zombies
// included).
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
