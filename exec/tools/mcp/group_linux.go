package mcp

import (
	"syscall"
)

// procAttr puts the server in its own process group, killed if hitl dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
