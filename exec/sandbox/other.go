//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

func probeBwrap() (string, string) { return "", "bwrap is Linux only" }

func machineMounts() []mountEntry { return nil }

func probeLandlock() (string, string) {
	return "", "Landlock is Linux only (macOS Seatbelt is a later step)"
}

func (s *Sandbox) wrap(prog string, argv []string, spec Spec) (string, []string, error) {
	if spec.Class == ClassAuto && (s == nil || s.mode != Off) {
		return "", nil, fmt.Errorf("sandbox: no sandbox to run a command nobody approved")
	}
	return prog, argv, nil
}

// HideEnviron does nothing where there is no re-exec to do it with.
func HideEnviron(args []string) {}

func insideProcs(int) []int { return nil }

func pinBwrap(string) (*os.File, error) { return nil, fmt.Errorf("no bwrap here") }

// procAttr starts a child in a new session (no controlling terminal, its
// own process group).
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func pidnsWorks() bool { return false }

// perRun: no per-run sandbox where there is no sandbox.
type perRun struct{ off bool }

func perRunWhy(Mechanism, bool) string { return "no per-run sandbox here" }

func (s *Sandbox) initFor(Spec) *runInit { return nil }

// Prepare has nothing to start here.
func (s *Sandbox) Prepare(Spec) {}

// Close removes the run's temp dir: no run's sandbox to end here.
func (s *Sandbox) Close() {
	if s != nil {
		s.removeTempDir()
	}
}

type runInit struct{}

type remoteProc struct{ pid int }

func (c *Cmd) startRemote(*runInit, string, []string) error {
	return fmt.Errorf("no per-run sandbox here")
}
func (rp *remoteProc) wait(time.Duration) error { return nil }
func (rp *remoteProc) term()                    {}
func (rp *remoteProc) exited() bool             { return true }
func (rp *remoteProc) kill()                    {}

func cachedProbe(_ string, probe func() (string, string)) func() (string, string) { return probe }

func forgetBwrapWorks(string) {}

type unpreparedError struct{ why string }

func (e *unpreparedError) Error() string { return e.why }

func (s *Sandbox) perRunFailed(error) {}

// initStartError is a command sent to a per-run sandbox that never started
// (none here).
type initStartError struct{ err error }

func (e *initStartError) Error() string { return e.err.Error() }
