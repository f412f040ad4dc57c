package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strings"
	"time"

	"golang.org/x/sys/unix"
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
	for _, kv := range loaderEnv(spec.Env) {
		name, value, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", name, value)
	}
	args = append(args, "--", prog)
	return append(args, argv[1:]...)
}

// wrap is the program and arguments that start prog (argv) under the
// sandbox's mechanism.
//
// The dynamic loader's variables (LD_PRELOAD, LD_LIBRARY_PATH, ...) never
// reach bwrap or the Landlock helper, which run before the sandbox is in
// place: the child gets them from the wrapper.
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

// pinBwrap copies bwrap into a sealed memfd that the run starts it from:
// a command a person approved (which keeps the user's write access) may
// replace /usr/bin/bwrap, never the bwrap that confines the next command.
func pinBwrap(path string) (*os.File, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	fd, err := unix.MemfdCreate("bwrap", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "bwrap")
	if _, err := io.Copy(f, io.LimitReader(src, 64<<20)); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
