package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"time"
)

// probeBwrap finds bwrap on PATH and checks that it can make the namespaces
// hitl asks for (it cannot where user namespaces are refused). why says
// what failed.
func probeBwrap() (path, why string) {
	path, err := osexec.LookPath("bwrap")
	if err != nil {
		return "", "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--unshare-pid", "--new-session", "--die-with-parent", "--", "/bin/true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Sprintf("bwrap cannot run here (%s)", firstLine(msg))
	}
	return path, ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimPrefix(s, "bwrap: ")
}

// bwrapArgs is bwrap's command line for prog: a fresh PID namespace with
// its own /proc, a new session, a minimal /dev (no host terminal), an
// empty tmpfs over the state dir; an Unseen child sees the whole file
// system read-only but its working dir and temp dir.
func (s *Sandbox) bwrapArgs(prog string, argv []string, spec Spec) []string {
	args := []string{"bwrap", "--die-with-parent", "--new-session", "--unshare-pid", "--cap-drop", "ALL"}
	if spec.Access == Seen && os.Geteuid() == 0 {
		for _, c := range capNames(seenCaps) {
			args = append(args, "--cap-add", c)
		}
	}
	if spec.Access == Unseen {
		args = append(args, "--ro-bind", "/", "/")
	} else {
		args = append(args, "--bind", "/", "/")
	}
	args = append(args, "--dev", "/dev", "--proc", "/proc")
	// The kernel's own settings are read-only: root, even without
	// capabilities, could otherwise set kernel.core_pattern or a uevent
	// helper to a program the kernel runs outside the sandbox.
	args = append(args, "--ro-bind", "/sys", "/sys", "--ro-bind", "/proc/sys", "/proc/sys",
		"--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger")
	if spec.Access == Unseen {
		for _, d := range []string{spec.Dir, spec.TempDir} {
			if d != "" {
				args = append(args, "--bind", d, d)
			}
		}
	}
	if s.stateDir != "" {
		args = append(args, "--tmpfs", s.stateDir, "--remount-ro", s.stateDir)
	}
	if spec.Dir != "" {
		args = append(args, "--chdir", spec.Dir)
	}
	args = append(args, "--", prog)
	return append(args, argv[1:]...)
}

// wrap is the program and arguments that start prog (argv) under the
// sandbox's mechanism.
func (s *Sandbox) wrap(prog string, argv []string, spec Spec) (string, []string, error) {
	switch s.Mechanism() {
	case MechBwrap:
		return s.bwrap, s.bwrapArgs(prog, argv, spec), nil
	case MechLandlock:
		args, err := s.landlockArgs(prog, argv, spec)
		return s.self, args, err
	}
	if spec.Access == Unseen && (s == nil || s.mode != Off) {
		// Allow rules do not apply without a sandbox: an Unseen child
		// cannot happen, and must not run unconfined if it does.
		return "", nil, fmt.Errorf("sandbox: no sandbox to run a command nobody approved")
	}
	return prog, argv, nil
}
