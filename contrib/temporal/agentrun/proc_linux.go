package agentrun

import (
	osexec "os/exec"
	"runtime"
	"syscall"
)

// prepare makes hitl die with the worker (a worker killed by SIGKILL leaves
// no hitl running on: Temporal retries the activity elsewhere) and ends
// its process group when the activity is cancelled.
func prepare(cmd *osexec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
}

// start starts cmd from a locked OS thread, and waits for it there:
// Pdeathsig follows the thread that started the child, so that thread must
// live as long as the child (it ends with the goroutine, never reused).
// The returned channel gives cmd.Wait's error.
func start(cmd *osexec.Cmd) (<-chan error, error) {
	started := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	return waited, <-started
}
