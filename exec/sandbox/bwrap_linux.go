package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sort"
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

// mount is one of bwrap's mount operations on path.
type mount struct {
	path string
	args []string
}

// bwrapArgs is bwrap's command line for prog (DESIGN §15): a fresh PID
// namespace with its own /proc, a new session, a minimal /dev (no host
// terminal), /proc/sys and /sys read-only, an empty read-only tmpfs over
// the state dir and every directory above it a mount point (a mount point
// cannot be renamed away). A ClassAuto child sees the file system
// read-only but the run's working directories and its temp dir (/proc
// whole), its credential stores empty, and no network unless granted. The mounts are
// made shallowest first, so no mount covers one made for a path beneath
// it. Under MechLayered bwrap starts the Landlock helper from hitl's own
// executable (fd 3), which confines prog further inside.
func (s *Sandbox) bwrapArgs(prog string, argv []string, v view) []string {
	var caps []int
	if os.Geteuid() == 0 {
		if v.policy().writeAll {
			caps = seenCaps
		}
		if s.Mechanism() == MechLayered {
			// bwrap leaves root its whole bounding set: the helper
			// empties it, which takes CAP_SETPCAP, then drops that.
			caps = append(slices.Clone(caps), unix.CAP_SETPCAP)
		}
	}
	args := bwrapMounts(v, caps)
	if v.Dir != "" {
		args = append(args, "--chdir", v.Dir)
	}
	if s.Mechanism() == MechLayered {
		// The helper sets the loader's variables once confined.
		v.InBwrap = true
		data, _ := json.Marshal(v)
		args = append(args, "--", "/proc/self/fd/3", helperArg, string(data), prog)
		return append(args, argv...)
	}
	for _, kv := range v.LoaderEnv {
		name, value, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", name, value)
	}
	args = append(args, "--", prog)
	return append(args, argv[1:]...)
}

// bwrapMounts is bwrap's command line for v up to the program: the
// namespaces, the capabilities caps (as bwrap names them) and the mounts.
func bwrapMounts(v view, caps []int) []string {
	p := v.policy()
	args := []string{"bwrap", "--die-with-parent", "--new-session", "--unshare-pid", "--cap-drop", "ALL"}
	if !v.Network {
		args = append(args, "--unshare-net")
	}
	for _, c := range capNames(caps) {
		args = append(args, "--cap-add", c)
	}
	var mounts []mount
	add := func(path string, a ...string) { mounts = append(mounts, mount{path, a}) }
	if p.writeAll {
		add("/", "--bind", "/", "/")
	} else {
		add("/", "--ro-bind", "/", "/")
	}
	// The state dir's parents, where a child could rename one away:
	// mount points, which cannot be renamed. A child that writes only in
	// its directories can rename nothing on the read-only root, so only
	// a parent inside one of them is made a mount point (read-only), and
	// one that is itself a writable directory is one already.
	if v.StateDir != "" {
		for _, a := range ancestors(v.StateDir) {
			switch {
			case p.writeAll:
				add(a, "--bind", a, a)
			case inWritable(a, v.Writable) && !slices.Contains(v.Writable, a):
				add(a, "--ro-bind", a, a)
			}
		}
	}
	for _, d := range v.Writable {
		add(d, "--bind", d, d)
	}
	for _, h := range v.Hidden {
		fi, err := os.Lstat(h)
		switch {
		case err != nil:
		case fi.IsDir():
			add(h, "--tmpfs", h, "--remount-ro", h)
		case fi.Mode().IsRegular():
			add(h, "--ro-bind", "/dev/null", h)
		}
	}
	add("/dev", "--dev", "/dev")
	add("/proc", "--proc", "/proc")
	// The kernel's own settings are read-only: root, even without
	// capabilities, could otherwise set kernel.core_pattern or a uevent
	// helper to a program the kernel runs outside the sandbox. A child
	// that may write nowhere in /proc (Landlock grants it nothing there)
	// and may make no namespace (whose uid_map is written there) gets all
	// of /proc read-only, one remount where two binds each cost bwrap a
	// pass over the mount table.
	if p.writeAll || p.namespaces {
		add("/proc/sys", "--ro-bind", "/proc/sys", "/proc/sys")
		add("/proc/sysrq-trigger", "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger")
	} else {
		add("/proc", "--remount-ro", "/proc")
	}
	// /sys is read-only with the root it is mounted on, unless that is
	// writable.
	if p.writeAll || inWritable("/sys", v.Writable) {
		add("/sys", "--ro-bind", "/sys", "/sys")
	}
	if v.StateDir != "" {
		add(v.StateDir, "--tmpfs", v.StateDir, "--remount-ro", v.StateDir)
	}
	sort.SliceStable(mounts, func(i, j int) bool { return depth(mounts[i].path) < depth(mounts[j].path) })
	for _, m := range mounts {
		args = append(args, m.args...)
	}
	return args
}

// inWritable says whether path lies in one of the writable directories.
func inWritable(path string, writable []string) bool {
	return slices.ContainsFunc(writable, func(d string) bool { return Within(path, d) })
}

// depth is how many names path has ("/" none).
func depth(path string) int {
	if path == "/" {
		return 0
	}
	return strings.Count(filepath.Clean(path), "/")
}

// wrap is the program and arguments that start prog (argv) under the
// sandbox's mechanism.
//
// The dynamic loader's variables (LD_PRELOAD, LD_LIBRARY_PATH, ...) never
// reach bwrap or the Landlock helper, which run before the sandbox is in
// place: the child gets them from the wrapper.
func (s *Sandbox) wrap(prog string, argv []string, spec Spec) (string, []string, error) {
	switch s.Mechanism() {
	case MechBwrap, MechLayered:
		v := s.viewOf(spec)
		if err := v.check(); err != nil {
			return "", nil, err
		}
		return s.bwrap, s.bwrapArgs(prog, argv, v), nil
	case MechLandlock:
		args, err := s.landlockArgs(prog, argv, spec)
		return s.self, args, err
	}
	if spec.Class == ClassAuto && (s == nil || s.mode != Off) {
		// Allow rules do not apply without a sandbox: a ClassAuto child
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
