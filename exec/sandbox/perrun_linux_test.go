package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// eachPerRun runs fn under each mechanism that has a per-run sandbox here,
// with a sandbox whose per-run init is on (the test fails when it did not
// start).
func eachPerRun(t *testing.T, fn func(t *testing.T, sb *Sandbox)) {
	for _, mode := range []Mode{Bwrap, Landlock} {
		t.Run(string(mode), func(t *testing.T) {
			sb, err := New(mode, t.TempDir())
			if err != nil {
				t.Skipf("no %s on this machine: %v", mode, err)
			}
			t.Cleanup(sb.Close)
			if sb.perRun.off {
				t.Skipf("no per-run sandbox under %s here: %s", mode, sb.Why)
			}
			sb.Notify = func(msg string) { t.Errorf("the per-run sandbox did not start: %s", msg) }
			fn(t, sb)
		})
	}
}

// initOf is the process that started pid's sandbox (its parent, or, for a
// command a holder started, the holder's parent) and its command line.
func initOf(t *testing.T, pid int) (int, string) {
	t.Helper()
	ppid, cmdline := parentOf(t, pid)
	if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/comm"); strings.TrimSpace(string(comm)) == "hitl-pidns" {
		return parentOf(t, ppid)
	}
	return ppid, cmdline
}

// parentOf is pid's parent and its command line.
func parentOf(t *testing.T, pid int) (int, string) {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			ppid, _ := strconv.Atoi(strings.TrimSpace(v))
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/cmdline")
			return ppid, string(cmdline)
		}
	}
	t.Fatalf("no PPid for %d", pid)
	return 0, ""
}

// startSleep starts a command that waits until it is stopped.
func startSleep(t *testing.T, sb *Sandbox, class Class, dir string) *Cmd {
	t.Helper()
	c := sb.Command(context.Background(), Spec{Path: "/bin/sleep", Args: []string{"60"}, Dir: dir, Class: class, Writable: []string{dir}})
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Kill()
		_ = c.Wait()
	})
	return c
}

// Commands of one view share one init, started once: the same parent,
// hitl's init helper; another class gets an init of its own; with the
// per-run sandbox off, a command's parent is its own wrapper.
func TestCommandsOfARunShareItsInit(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		a := startSleep(t, sb, ClassAuto, dir)
		b := startSleep(t, sb, ClassAuto, dir)
		c := startSleep(t, sb, ClassApproved, dir)
		pa, cmdline := initOf(t, a.Pid())
		pb, _ := initOf(t, b.Pid())
		pc, _ := initOf(t, c.Pid())
		if !strings.Contains(cmdline, initArg) {
			t.Errorf("the command's parent is %q, not the run's init", cmdline)
		}
		if pa != pb {
			t.Errorf("two auto commands have the parents %d and %d, not one init", pa, pb)
		}
		if pc == pa {
			t.Errorf("an approved command shares the auto commands' init %d", pa)
		}
	})
	t.Run("per-command", func(t *testing.T) {
		saved := perRunEnabled
		perRunEnabled = false
		defer func() { perRunEnabled = saved }()
		sb, err := New(Auto, t.TempDir())
		if err != nil || sb.Mechanism() == MechNone {
			t.Skip("no sandbox here")
		}
		a := startSleep(t, sb, ClassAuto, t.TempDir())
		if _, cmdline := initOf(t, a.Pid()); strings.Contains(cmdline, initArg) {
			t.Errorf("with the per-run sandbox off, a command's parent is an init: %q", cmdline)
		}
	})
}

// A command that starts a thousand children, some in sessions of their
// own, and exits leaves none of them behind: its PID namespace ends with
// it. The next command of the run runs as before.
func TestForkedChildrenEndWithTheirCommand(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		marker := "hitl-forked-" + strconv.Itoa(os.Getpid())
		out, err := runIn(t, sb, ClassAuto, dir, `i=0; while [ $i -lt 1000 ]; do sh -c 'sleep 60; :' `+marker+` & i=$((i+1)); done; setsid sh -c 'sleep 60; :' `+marker+` & echo started`)
		if err != nil || !strings.Contains(out, "started") {
			t.Fatalf("the command: %v %s", err, out)
		}
		if left := procsNamed(marker); len(left) > 0 {
			t.Errorf("processes the command started outlive it: %v", left)
		}
		out, err = runIn(t, sb, ClassAuto, dir, `echo next`)
		if err != nil || strings.TrimSpace(out) != "next" {
			t.Errorf("the next command: %v %q", err, out)
		}
	})
}

// procsNamed are the pids whose command line holds name.
func procsNamed(name string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(data, []byte(name)) {
			out = append(out, pid)
		}
	}
	return out
}

// A command that exits without reading the 16 MiB it was given on stdin
// ends as it ended; so does one that reads it all.
func TestStdinNotReadIsNoMatter(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		big := bytes.Repeat([]byte("x"), 16<<20)
		for _, tc := range []struct {
			script string
			want   string
		}{
			{"exit 3", ""},
			{"wc -c", "16777216"},
		} {
			var out bytes.Buffer
			c := sb.Command(context.Background(), Spec{
				Path: "/bin/sh", Args: []string{"-c", tc.script}, Env: []string{"PATH=/usr/bin:/bin"},
				Stdin: bytes.NewReader(big), Stdout: &out, Class: ClassAuto, Writable: []string{t.TempDir()},
			})
			err := c.Run()
			code, _, ok := Status(err)
			if tc.want == "" && (!ok || code != 3) {
				t.Errorf("%s: %v", tc.script, err)
			}
			if tc.want != "" && (err != nil || strings.TrimSpace(out.String()) != tc.want) {
				t.Errorf("%s: %v %q", tc.script, err, out.String())
			}
		}
	})
}

// An init that dies (nothing a command can do: the probe table's
// signal-init row) fails the commands in it, promptly, and the run's next
// command gets a new one.
func TestInitGoneFailsOnlyItsCommands(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		c := startSleep(t, sb, ClassAuto, dir)
		initPid, _ := initOf(t, c.Pid())
		// The sleep's holder (and the worker's kept ready, once made),
		// named by itself once it runs: on a loaded machine, a moment
		// after the command started.
		var holders []int
		for deadline := time.Now().Add(5 * time.Second); len(holders) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			holders = childrenNamed(initPid, "hitl-pidns")
		}
		if len(holders) == 0 {
			t.Errorf("the init has no holder")
		}
		if err := syscall.Kill(initPid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if !errors.Is(err, errInitGone) {
				t.Errorf("a command whose init died: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a command whose init died was never given up on")
		}
		// Its holders end with it (their stdin's other end was the
		// init's), and with them their namespaces.
		deadline := time.Now().Add(5 * time.Second)
		for alive(holders) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(holders) {
			t.Errorf("holders outlived their init: %v", holders)
		}
		if out, err := runIn(t, sb, ClassAuto, dir, "echo again"); err != nil || strings.TrimSpace(out) != "again" {
			t.Errorf("the next command: %v %q", err, out)
		}
	})
}

// When the per-run sandbox cannot start, each command gets a sandbox of its
// own, and the run is told why once (by the command that needed it, not by
// a start ahead).
func TestPerRunFallbackSaysWhyOnce(t *testing.T) {
	sb, err := New(Auto, t.TempDir())
	if err != nil || sb.perRun.off {
		t.Skip("no per-run sandbox here")
	}
	t.Cleanup(sb.Close)
	saved := startInitHook
	startInitHook = func(*Sandbox, view) (*runInit, error) { return nil, errors.New("refused by the test") }
	defer func() { startInitHook = saved }()
	var told []string
	sb.Notify = func(msg string) { told = append(told, msg) }
	dir := t.TempDir()
	// Started ahead (Prepare: the run may end before its first command,
	// taking the temp dir with it), a failure is no one's to hear yet.
	if ri := sb.initOf(Spec{Class: ClassAuto, Writable: []string{dir}}, true); ri != nil || len(told) > 0 || sb.perRun.off {
		t.Errorf("a sandbox started ahead that failed: init %v, told %q, off %v", ri, told, sb.perRun.off)
	}
	for i := range 3 {
		out, err := runIn(t, sb, Class(i%2), dir, "echo ran")
		if err != nil || strings.TrimSpace(out) != "ran" {
			t.Fatalf("command %d: %v %q", i, err, out)
		}
	}
	if len(told) != 1 || !strings.Contains(told[0], "refused by the test") || !strings.Contains(told[0], "a sandbox of its own") {
		t.Errorf("told %q", told)
	}
}

// A command sees no descriptor but its three: not the socket to hitl, not
// hitl's executable.
func TestCommandHoldsOnlyItsStdio(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		out, err := runIn(t, sb, ClassApproved, t.TempDir(), `for f in /proc/self/fd/*; do echo "${f##*/} $(readlink $f)"; done`)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			fd, target, _ := strings.Cut(line, " ")
			// (A descriptor the shell's own glob held is gone by the
			// time readlink looks: no target.)
			if n, _ := strconv.Atoi(fd); n > 2 && target != "" && !strings.HasPrefix(target, "/proc/") {
				t.Errorf("the command holds fd %s (%s)", fd, target)
			}
		}
	})
}

// What runs is what was asked, byte for byte: arguments and environment
// that are not UTF-8 reach the command as they were (a directory that is
// not UTF-8 is refused: the view names it).
func TestCommandGetsBytesAsGiven(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := filepath.Join(t.TempDir(), "d é")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		c := sb.Command(context.Background(), Spec{
			Path: "/bin/sh", Args: []string{"-c", `printf '%s|%s|%s' "$1" "$V" "$(pwd)"`, "sh", "a\x80b\xc3("},
			Env: []string{"PATH=/usr/bin:/bin", "V=\xe9t\xe9"}, Dir: dir,
			Stdout: &out, Class: ClassApproved,
		})
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		if want := "a\x80b\xc3(|\xe9t\xe9|" + dir; out.String() != want {
			t.Errorf("got %q, want %q", out.String(), want)
		}
	})
}

// Commands at once in one init are bounded: one over the bound is refused,
// alone, with the reason; those running go on, and once they end the next
// one runs (the init holds a thread for each, and a process may hold only
// so many).
func TestCommandsAtOnceAreBounded(t *testing.T) {
	saved := maxRunning
	maxRunning = 5
	defer func() { maxRunning = saved }()
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		var running []*Cmd
		for range 5 {
			c := sb.Command(context.Background(), Spec{Path: "/bin/sleep", Args: []string{"0.5"}, Dir: dir, Class: ClassAuto, Writable: []string{dir}})
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			running = append(running, c)
		}
		over := sb.Command(context.Background(), Spec{Path: "/bin/true", Dir: dir, Class: ClassAuto, Writable: []string{dir}})
		if err := over.Start(); err == nil || !strings.Contains(err.Error(), "too many commands at once") {
			t.Errorf("a command over the bound: %v", err)
			if err == nil {
				_ = over.Wait()
			}
		}
		for i, c := range running {
			if err := c.Wait(); err != nil {
				t.Errorf("command %d under the bound: %v", i, err)
			}
		}
		if out, err := runIn(t, sb, ClassAuto, dir, "echo after"); err != nil || strings.TrimSpace(out) != "after" {
			t.Errorf("after: %v %q", err, out)
		}
	})
}

// Each command's parent is its own, alive while the command runs: its
// worker's holder (which ends only with its namespace), or, where the
// worker's thread starts it, that thread of the init. A command that asks
// for a signal when its parent dies (PR_SET_PDEATHSIG, as bwrap's
// --die-with-parent does) gets it when that parent ends, not the init, so
// the parent may not end before the command.
func TestCommandKeepsItsParentThread(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		const n = 8
		var pids []int
		for range n {
			pids = append(pids, startSleep(t, sb, ClassApproved, dir).Pid())
		}
		// Let a thread that would end once its command runs do so.
		time.Sleep(200 * time.Millisecond)
		init, cmdline := initOf(t, pids[0])
		if !strings.Contains(cmdline, initArg) {
			t.Fatalf("the command's parent is %q, not the run's init", cmdline)
		}
		parent := map[int]int{} // command → the init's thread, or holder, that is its parent
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(init) + "/task")
		for _, task := range tasks {
			tid, _ := strconv.Atoi(task.Name())
			kids, _ := os.ReadFile("/proc/" + strconv.Itoa(init) + "/task/" + task.Name() + "/children")
			for _, f := range strings.Fields(string(kids)) {
				pid, _ := strconv.Atoi(f)
				parent[pid] = tid
			}
		}
		for _, h := range childrenNamed(init, "hitl-pidns") {
			kids, _ := os.ReadFile("/proc/" + strconv.Itoa(h) + "/task/" + strconv.Itoa(h) + "/children")
			for _, f := range strings.Fields(string(kids)) {
				pid, _ := strconv.Atoi(f)
				parent[pid] = h
			}
		}
		parents := map[int]bool{}
		for _, pid := range pids {
			p, ok := parent[pid]
			switch {
			case !ok:
				t.Errorf("command %d is no child of a thread of the init %d, nor of a holder", pid, init)
			case p == init || parents[p]:
				t.Errorf("command %d's parent %d is not its own (the init's main thread, or another command's)", pid, p)
			}
			parents[p] = true
		}
	})
}

// attackEnv names, in a command's environment, what the test binary does
// when the run's sandbox starts it as that command (hangAttack).
const attackEnv = "HITL_SANDBOX_TEST_ATTACK"

func init() {
	if mode := os.Getenv(attackEnv); mode != "" && len(os.Args) > 0 {
		os.Exit(hangAttack(mode))
	}
}

// hangAttack is a command that tries to keep hitl waiting for it forever:
//
//	clone-parent  clone(CLONE_PARENT): a child of its parent, the init,
//	              outside its PID namespace, left a zombie
//	traceme       ptrace(PTRACE_TRACEME), then exec: its parent its tracer
//	trace-owner   a child that leaves its session, ignores SIGTERM and
//	              traces the command, whose exit its tracer never waits for
func hangAttack(mode string) int {
	switch mode {
	case "clone-parent":
		r, _, errno := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(unix.CLONE_PARENT|unix.SIGCHLD), 0, 0, 0, 0, 0)
		if errno == 0 && r == 0 {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
		}
		fmt.Println("clone(CLONE_PARENT):", errno)
	case "traceme":
		runtime.LockOSThread()
		_, _, errno := syscall.RawSyscall6(syscall.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0, 0, 0, 0)
		fmt.Println("ptrace(PTRACE_TRACEME):", errno)
		_ = syscall.Exec("/bin/true", []string{"true"}, nil)
	case "trace-owner":
		cmd := osexec.Command(os.Args[0])
		cmd.Env = []string{attackEnv + "=tracer", "OWNER=" + strconv.Itoa(os.Getpid())}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Println("tracer:", err)
			return 0
		}
		time.Sleep(300 * time.Millisecond)
	case "exit-tracer":
		// Ask to stop the command at its exit: refused, however asked;
		// tracing it plainly is not.
		cmd := osexec.Command(os.Args[0])
		cmd.Env = []string{attackEnv + "=exit-tracer-child", "OWNER=" + strconv.Itoa(os.Getpid())}
		out, err := cmd.CombinedOutput()
		fmt.Printf("%s(%v)\n", out, err)
	case "exit-tracer-child":
		owner, _ := strconv.Atoi(os.Getenv("OWNER"))
		runtime.LockOSThread()
		_, _, errno := syscall.RawSyscall6(syscall.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(owner), 0, unix.PTRACE_O_TRACEEXIT, 0, 0)
		fmt.Println("seize with TRACEEXIT:", errno)
		_, _, errno = syscall.RawSyscall6(syscall.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(owner), 0, 0, 0, 0)
		fmt.Println("seize:", errno)
		_, _, errno = syscall.RawSyscall6(syscall.SYS_PTRACE, unix.PTRACE_SETOPTIONS, uintptr(owner), 0, unix.PTRACE_O_TRACEEXIT, 0, 0)
		fmt.Println("setoptions TRACEEXIT:", errno)
		_, _, errno = syscall.RawSyscall6(syscall.SYS_PTRACE, 21, uintptr(owner), 0, unix.PTRACE_O_TRACEEXIT, 0, 0)
		fmt.Println("old setoptions TRACEEXIT:", errno)
		_ = unix.PtraceDetach(owner)
	case "tracer":
		signal.Ignore(syscall.SIGTERM)
		owner, _ := strconv.Atoi(os.Getenv("OWNER"))
		runtime.LockOSThread()
		if err := unix.PtraceSeize(owner); err != nil {
			fmt.Println("seize:", err)
		}
		time.Sleep(time.Minute)
	}
	return 0
}

// A command's process cannot have another stop at its exit
// (PTRACE_O_TRACEEXIT: a tracee stops there even after SIGKILL, and two
// tracing each other would never end, nor let their namespace end); plain
// tracing is left alone.
func TestCommandCannotStopAtItsExit(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		var out bytes.Buffer
		c := sb.Command(context.Background(), Spec{
			Path: os.Args[0], Env: []string{attackEnv + "=exit-tracer"}, Dir: dir,
			Stdout: &out, Stderr: &out, Class: ClassApproved,
		})
		if err := c.Run(); err != nil {
			t.Fatal(err, out.String())
		}
		got := out.String()
		for _, want := range []string{
			"seize with TRACEEXIT: operation not permitted",
			"seize: errno 0",
			"setoptions TRACEEXIT: operation not permitted",
			"old setoptions TRACEEXIT: operation not permitted",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("no %q in:\n%s", want, got)
			}
		}
	})
}

// No command keeps hitl waiting for it past its timeout: not one that
// leaves a child of the init, nor one whose tracer is the init's thread,
// nor one traced by a child that never waits for it.
func TestCommandCannotHangItsWait(t *testing.T) {
	for _, mode := range []string{"clone-parent", "traceme", "trace-owner"} {
		t.Run(mode, func(t *testing.T) {
			eachPerRun(t, func(t *testing.T, sb *Sandbox) {
				dir := t.TempDir()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				var out bytes.Buffer
				c := sb.Command(ctx, Spec{
					Path: os.Args[0], Env: []string{attackEnv + "=" + mode}, Dir: dir,
					Stdout: &out, Stderr: &out, Class: ClassAuto, Writable: []string{dir}, Grace: time.Second,
				})
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- c.Wait() }()
				select {
				case err := <-done:
					t.Logf("ended: %v %q", err, out.String())
				case <-time.After(20 * time.Second):
					t.Fatalf("Wait still blocked 20 s after a 2 s timeout: hitl would hang (%q)", out.String())
				}
				if out, err := runIn(t, sb, ClassAuto, dir, "echo next"); err != nil || strings.TrimSpace(out) != "next" {
					t.Errorf("the next command: %v %q", err, out)
				}
			})
		})
	}
}

// When the run's sandbox starts but cannot make a command's (a PID
// namespace, the holder, a domain refused), that command and every one
// after it get a sandbox of their own, and the run is told once.
func TestUnpreparedCommandFallsBack(t *testing.T) {
	saved := failPrepare
	failPrepare = true
	defer func() { failPrepare = saved }()
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		var told []string
		sb.Notify = func(msg string) { told = append(told, msg) }
		dir := t.TempDir()
		for i := range 3 {
			out, err := runIn(t, sb, ClassAuto, dir, "echo ran")
			if err != nil || strings.TrimSpace(out) != "ran" {
				t.Fatalf("command %d: %v %q", i, err, out)
			}
		}
		if len(told) != 1 || !strings.Contains(told[0], "failing on purpose") || !sb.perRun.off {
			t.Errorf("told %q, off %v", told, sb.perRun.off)
		}
	})
}

// childrenNamed are the children of pid whose name (comm) is name.
func childrenNamed(pid int, name string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, _ := os.ReadFile("/proc/" + e.Name() + "/status")
		if !bytes.Contains(status, []byte("\nPPid:\t"+strconv.Itoa(pid)+"\n")) {
			continue
		}
		if comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm"); string(bytes.TrimRight(comm, "\n")) == name {
			out = append(out, child)
		}
	}
	return out
}

// alive says whether any of pids is still running (not a zombie).
func alive(pids []int) bool {
	for _, pid := range pids {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] != "Z" {
			return true
		}
	}
	return false
}

// A holder stopped from outside the sandbox (no command can signal it)
// does not hold its command's end for ever: once the command ended, a
// holder not gone within holderGrace is killed, and the next command
// runs.
func TestStoppedHolderDoesNotHoldTheEnd(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		c := sb.Command(context.Background(), Spec{Path: "/bin/sleep", Args: []string{"0.3"}, Dir: dir, Class: ClassAuto, Writable: []string{dir}})
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		initPid, _ := initOf(t, c.Pid())
		holders := childrenNamed(initPid, "hitl-pidns")
		if len(holders) == 0 {
			t.Fatal("the init has no holder")
		}
		for _, h := range holders {
			_ = syscall.Kill(h, syscall.SIGSTOP)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the command: %v", err)
			}
		case <-time.After(holderGrace + 10*time.Second):
			for _, h := range holders {
				_ = syscall.Kill(h, syscall.SIGCONT)
			}
			t.Fatal("a stopped holder held its command's end")
		}
		if out, err := runIn(t, sb, ClassAuto, dir, "echo after"); err != nil || strings.TrimSpace(out) != "after" {
			t.Errorf("the next command: %v %q", err, out)
		}
	})
}

// endsWithin sees a process that has ended, however short the time it is
// given (a deadline already past included), and waits no longer than it
// is given for one that has not.
func TestEndsWithinSeesAnEnd(t *testing.T) {
	start := func(prog string, args ...string) (pid, pidfd int) {
		t.Helper()
		pid, err := syscall.ForkExec(prog, append([]string{prog}, args...), &syscall.ProcAttr{})
		if err != nil {
			t.Fatal(err)
		}
		pidfd, err = unix.PidfdOpen(pid, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
			waitPid(pid)
			unix.Close(pidfd)
		})
		return pid, pidfd
	}
	_, ended := start("/bin/true")
	if !endsWithin(ended, -1) {
		t.Fatal("/bin/true did not end")
	}
	for _, d := range []time.Duration{0, time.Nanosecond, time.Second} {
		if !endsWithin(ended, d) {
			t.Errorf("an ended process, within %v: not ended", d)
		}
	}
	_, running := start("/bin/sleep", "60")
	t0 := time.Now()
	if endsWithin(running, 100*time.Millisecond) {
		t.Error("a running process ended")
	}
	if took := time.Since(t0); took > 5*time.Second {
		t.Errorf("waited %v for 100ms", took)
	}
}

// A pidfd names its process's pid in hitl's PID namespace, by the kernel's
// ioctl and by fdinfo alike: the pid while the process runs or is a zombie,
// 0 once it has been waited for.
func TestPidOfNamesThePid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pidOf func(*os.File) (int, error)
	}{{"pidOf", pidOf}, {"fdinfo", func(f *os.File) (int, error) { return fdinfoPid(int(f.Fd())) }}} {
		t.Run(tc.name, func(t *testing.T) {
			pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "60"}, &syscall.ProcAttr{})
			if err != nil {
				t.Fatal(err)
			}
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				waitPid(pid)
				t.Fatal(err)
			}
			pidfd := os.NewFile(uintptr(fd), "pidfd")
			defer pidfd.Close()
			if got, err := tc.pidOf(pidfd); err != nil || got != pid {
				t.Errorf("running: %d, %v; want %d", got, err, pid)
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if !endsWithin(fd, -1) {
				t.Fatal("sleep did not end")
			}
			if got, err := tc.pidOf(pidfd); err != nil || got != pid {
				t.Errorf("a zombie: %d, %v; want %d", got, err, pid)
			}
			waitPid(pid)
			if got, err := tc.pidOf(pidfd); err != nil || got != 0 {
				t.Errorf("waited for: %d, %v; want 0", got, err)
			}
		})
	}
}

// What a command run unasked may not read stays hidden from every command
// of the run, however it changed after the run's sandbox started: made
// then, replaced by a rename over it (as editors and credential helpers
// write), or removed and made again. The init of the view before ends once
// its commands have.
func TestHiddenPathsChangedDuringTheRunStayHidden(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		secretDir := t.TempDir()
		secret := filepath.Join(secretDir, "prod.env")
		read := func() string {
			t.Helper()
			var out bytes.Buffer
			c := sb.Command(context.Background(), Spec{
				Path: "/bin/cat", Args: []string{secret}, Dir: dir, Class: ClassAuto,
				Writable: []string{dir}, DenyRead: []string{secret}, Stdout: &out, Stderr: &out,
			})
			_ = c.Run()
			return out.String()
		}
		write := func(content string) {
			t.Helper()
			tmp := filepath.Join(secretDir, "new")
			if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, secret); err != nil {
				t.Fatal(err)
			}
		}
		if got := read(); strings.Contains(got, "SECRET") {
			t.Fatalf("before it exists: %q", got)
		}
		// A command still running in the init a change replaces runs on
		// to its own end.
		running := sb.Command(context.Background(), Spec{
			Path: "/bin/sleep", Args: []string{"0.5"}, Dir: dir, Class: ClassAuto,
			Writable: []string{dir}, DenyRead: []string{secret},
		})
		if err := running.Start(); err != nil {
			t.Fatal(err)
		}
		write("SECRET-made")
		if got := read(); strings.Contains(got, "SECRET") {
			t.Errorf("a hidden file made during the run was read: %q", got)
		}
		if err := running.Wait(); err != nil {
			t.Errorf("a command of the replaced init: %v", err)
		}
		write("SECRET-replaced")
		if got := read(); strings.Contains(got, "SECRET") {
			t.Errorf("a hidden file replaced during the run was read: %q", got)
		}
		// Removed and made again at once: ext4 may hand the inode
		// number back.
		if err := os.Remove(secret); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(secret, []byte("SECRET-recreated"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := read(); strings.Contains(got, "SECRET") {
			t.Errorf("a hidden file removed and made again was read: %q", got)
		}
		if err := os.Remove(secret); err != nil {
			t.Fatal(err)
		}
		_ = read()
		write("SECRET-again")
		if got := read(); strings.Contains(got, "SECRET") {
			t.Errorf("a hidden file removed and made again was read: %q", got)
		}
		// Every init but the last was replaced and, with no command in
		// it, ends.
		sb.perRun.mu.Lock()
		live, retired := len(sb.perRun.inits), slices.Clone(sb.perRun.retired)
		sb.perRun.mu.Unlock()
		if live != 1 || len(retired) == 0 {
			t.Fatalf("%d inits and %d replaced, want 1 and some", live, len(retired))
		}
		for _, ri := range retired {
			select {
			case <-ri.exited:
			case <-time.After(5 * time.Second):
				t.Fatal("an init replaced by a newer one of its view did not end")
			}
		}
	})
}

// Inside bwrap /dev/shm is the sandbox's own, memory: what a command left
// there, even a directory no one may enter, never reaches the next command
// of the run, as with a sandbox per command, and holds no memory for the
// rest of the run: the sandbox it was left in ends.
func TestSharedMemoryDoesNotOutliveItsCommand(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		if sb.Mechanism() != MechLayered {
			t.Skip("under Landlock alone /dev/shm is the machine's, where a command nobody saw may not write")
		}
		dir := t.TempDir()
		run := func(script string) string {
			t.Helper()
			var out bytes.Buffer
			c := sb.Command(context.Background(), Spec{
				Path: "/bin/sh", Args: []string{"-c", script}, Dir: dir, Class: ClassAuto,
				Writable: []string{dir}, Stdout: &out, Stderr: &out,
			})
			if err := c.Run(); err != nil {
				t.Fatalf("%s: %v\n%s", script, err, out.String())
			}
			return out.String()
		}
		run("mkdir /dev/shm/d && head -c 1048576 /dev/zero > /dev/shm/d/pin && echo x > /dev/shm/note && chmod 0 /dev/shm/d")
		if got := run("ls -A /dev/shm"); got != "" {
			t.Errorf("the next command finds in /dev/shm: %q", got)
		}
		// The sandbox it was left in ended: its memory with it.
		sb.perRun.mu.Lock()
		retired := slices.Clone(sb.perRun.retired)
		sb.perRun.mu.Unlock()
		if len(retired) == 0 {
			t.Fatal("the sandbox /dev/shm was left in was not replaced")
		}
		for _, ri := range retired {
			select {
			case <-ri.exited:
			case <-time.After(5 * time.Second):
				t.Fatal("the sandbox /dev/shm was left in did not end")
			}
		}
	})
}

// zombiesOf counts the zombies whose parent is named parent.
func zombiesOf(parent string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[0] != "Z" {
			continue
		}
		if comm, _ := os.ReadFile("/proc/" + fields[1] + "/comm"); strings.TrimSpace(string(comm)) == parent {
			n++
		}
	}
	return n
}

// The orphans of a command that runs on (a build's daemons, a script's
// `(job &)`) are handed to its holder, the first process of its PID
// namespace, which waits for each that ends: none is left a zombie
// holding a pid for as long as the command runs.
func TestOrphansOfARunningCommandAreWaitedFor(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		c := sb.Command(context.Background(), Spec{
			Path: "/bin/sh", Args: []string{"-c", `i=0; while [ $i -lt 200 ]; do (/bin/true &); i=$((i+1)); done; touch orphaned; exec sleep 30`},
			Dir: dir, Class: ClassAuto, Writable: []string{dir},
		})
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			c.Kill()
			_ = c.Wait()
		}()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(dir, "orphaned")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the command did not get through its orphans")
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		if n := zombiesOf(holderProcName); n > 0 {
			t.Errorf("%d orphans of a running command are zombies of its holder", n)
		}
	})
}

// pidNSOf runs a command that says which PID namespace it ran in, first
// running script (which may leave processes behind).
func pidNSOf(t *testing.T, sb *Sandbox, class Class, dir, script string) string {
	t.Helper()
	out, err := runIn(t, sb, class, dir, script+"\nreadlink /proc/self/ns/pid")
	if err != nil {
		t.Fatalf("the command: %v %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// Commands one after another start from one prepared worker, in its PID
// namespace, which holds nothing of the command before: all a command
// left there, setsid or stopped, is killed and waited for before its end
// is told.
func TestCommandsOneAfterAnotherReuseAWorker(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		for _, class := range []Class{ClassAuto, ClassApproved} {
			dir := t.TempDir()
			marker := "hitl-reused-" + strconv.Itoa(os.Getpid())
			first := pidNSOf(t, sb, class, dir, `true`)
			// Set apart, stopped, deaf to the polite signals, and (where
			// the class may) in user and PID namespaces of their own.
			leave := `setsid sh -c 'sleep 60; : ` + marker + `' &
sh -c 'kill -STOP $$; : ` + marker + `' &
setsid sh -c 'trap "" TERM HUP INT; sleep 60; : ` + marker + `' &
unshare -Upf sh -c 'sleep 60; : ` + marker + `' 2>/dev/null &`
			for i := range 3 {
				ns := pidNSOf(t, sb, class, dir, leave)
				if left := procsNamed(marker); len(left) > 0 {
					t.Fatalf("%s command %d left processes that outlive its end: %v", class, i, left)
				}
				if ns != first {
					t.Errorf("%s command %d ran in %s, not in the worker's namespace %s", class, i, ns, first)
				}
			}
		}
	})
}

// As root a command a person saw keeps CAP_SETUID: what it leaves under
// another user is killed all the same, by its holder (which alone keeps
// CAP_KILL), and the worker starts the next command.
func TestLeftoversUnderAnotherUserEndWithTheirCommand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a command that may change its user")
	}
	setpriv, err := osexec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv here")
	}
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		marker := "hitl-otheruser-" + strconv.Itoa(os.Getpid())
		first := pidNSOf(t, sb, ClassApproved, dir, `true`)
		ns := pidNSOf(t, sb, ClassApproved, dir, setpriv+` --reuid 65534 --regid 65534 --clear-groups sh -c 'sleep 60; : `+marker+`' & sleep 0.2`)
		if left := procsNamed(marker); len(left) > 0 {
			t.Fatalf("processes under another user outlive their command: %v", left)
		}
		if ns != first {
			t.Fatalf("the command ran in %s, not in the worker's namespace %s", ns, first)
		}
		if next := pidNSOf(t, sb, ClassApproved, dir, `true`); next != first {
			t.Errorf("after the leftovers under another user, the next command ran in %s, not in the worker's namespace %s: the holder could not kill them", next, first)
		}
	})
}

// A command cannot change its holder, pid 1 of its namespace, which the
// worker's later commands share: not its limits, its CPUs, its scheduling
// nor its priority, by pid or for all of its user. A later command finds
// the holder as it was.
func TestCommandCannotChangeItsHolder(t *testing.T) {
	for _, tool := range []string{"prlimit", "taskset", "chrt", "renice", "ionice"} {
		if _, err := osexec.LookPath(tool); err != nil {
			t.Skipf("no %s here", tool)
		}
	}
	const look = `prlimit --pid 1 --cpu --nofile --noheadings --output SOFT,HARD; taskset -p 1; chrt -p 1; ionice -p 1`
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		state := func() string {
			out, err := runIn(t, sb, ClassAuto, dir, look+"\nreadlink /proc/self/ns/pid")
			if err != nil {
				t.Fatalf("looking at the holder: %v\n%s", err, out)
			}
			return out
		}
		before := state()
		out, _ := runIn(t, sb, ClassAuto, dir, `
for change in 'prlimit --pid 1 --cpu=1:1' 'prlimit --pid 1 --nofile=8:8' 'taskset -p 1 1' 'chrt -i -p 0 1' 'chrt -b -p 0 1' 'renice -n 19 -p 1' 'renice -n 19 -u '$(id -u) 'ionice -c 3 -p 1' 'ionice -c 3 -u '$(id -u); do
	$change >/dev/null 2>&1 && echo "changed: $change"
done
echo tried`)
		if !strings.Contains(out, "tried") || strings.Contains(out, "changed:") {
			t.Errorf("a command changed its holder:\n%s", out)
		}
		if after := state(); after != before {
			t.Errorf("the next command finds its holder changed:\nbefore: %s\nafter:  %s", before, after)
		}
	})
}
