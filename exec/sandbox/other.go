//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

func probeBwrap() (string, string) { return "", "bwrap is Linux only" }

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
