package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// notices collects what a Sandbox tells its run.
type notices struct {
	mu   sync.Mutex
	told []string
}

func (n *notices) listen(sb *Sandbox) {
	sb.Notify = func(msg string) {
		n.mu.Lock()
		n.told = append(n.told, msg)
		n.mu.Unlock()
	}
}

func (n *notices) said() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.told)
}

// failingView has the init of a view whose writable dirs hold dir fail
// before it is ready, and every other init start as ever.
func failingView(t *testing.T, dir string) {
	saved := startInitHook
	t.Cleanup(func() { startInitHook = saved })
	startInitHook = func(s *Sandbox, v view) (*runInit, error) {
		failStart = slices.Contains(v.Writable, dir)
		defer func() { failStart = false }()
		return s.startInit(v)
	}
}

// startFailed waits until ri says it never became ready.
func startFailed(t *testing.T, ri *runInit) {
	t.Helper()
	if ri == nil {
		t.Fatal("no init was started")
	}
	select {
	case <-ri.dead:
	case <-time.After(10 * time.Second):
		t.Fatal("the init neither started nor failed")
	}
	if ri.failedStart() == nil {
		t.Fatal("the init ended without failing to start")
	}
}

// A run starts its sandbox ahead more than once (the tools, then each
// shell toolset): one that found the first never became ready tells the
// run nothing and leaves the per-run sandbox on; the command that needs
// it is the one told.
func TestStartAheadAgainTellsNothing(t *testing.T) {
	saved := failStart
	failStart = true
	defer func() { failStart = saved }()
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		var n notices
		n.listen(sb)
		dir := t.TempDir()
		spec := Spec{Class: ClassAuto, Writable: []string{dir}}
		startFailed(t, sb.initOf(spec, true))
		for range 10 {
			sb.Prepare(spec)
		}
		sb.initOf(spec, true)
		sb.perRun.mu.Lock()
		off := sb.perRun.off
		sb.perRun.mu.Unlock()
		if told := n.said(); len(told) > 0 || off {
			t.Fatalf("a start ahead told the run %q (the per-run sandbox off: %v)", told, off)
		}
		if out, err := runIn(t, sb, ClassAuto, dir, "echo ran"); err != nil || strings.TrimSpace(out) != "ran" {
			t.Fatalf("the command: %v %q", err, out)
		}
		if told := n.said(); len(told) != 1 || !strings.Contains(told[0], "could not start (failing on purpose (a test))") {
			t.Errorf("told %q", told)
		}
	})
}

// A view whose sandbox never becomes ready ends no other view's: a
// command running there runs to its end, whether a command or a start
// ahead found the failure.
func TestFailedViewLeavesOtherViewsRunning(t *testing.T) {
	for _, by := range []string{"command", "start-ahead"} {
		t.Run(by, func(t *testing.T) {
			failDir := t.TempDir()
			failingView(t, failDir)
			eachPerRun(t, func(t *testing.T, sb *Sandbox) {
				var n notices
				n.listen(sb)
				dir := t.TempDir()
				running := startSleep(t, sb, ClassAuto, dir)
				spec := Spec{Class: ClassAuto, Writable: []string{failDir}}
				if by == "start-ahead" {
					startFailed(t, sb.initOf(spec, true))
					sb.initOf(spec, true)
				} else {
					if out, err := runIn(t, sb, ClassAuto, failDir, "echo ran"); err != nil || strings.TrimSpace(out) != "ran" {
						t.Fatalf("the failed view's command: %v %q", err, out)
					}
					if told := n.said(); len(told) != 1 || !strings.Contains(told[0], "failing on purpose") {
						t.Fatalf("told %q", told)
					}
				}
				if running.rm == nil {
					t.Fatal("the other view's command is not in its run's sandbox")
				}
				if running.rm.exited() {
					t.Fatalf("the other view's command ended: %v", running.Wait())
				}
				running.Kill()
				var ee *ExitError
				if err := running.Wait(); !errors.As(err, &ee) || ee.Status.Signal() != syscall.SIGKILL {
					t.Errorf("the other view's command ended %v, not by the kill", err)
				}
			})
		})
	}
}

// A run that ends as its sandbox starts tells nothing (the sandbox did not
// fail), keeps bwrap's word that it runs here, and runs no command it had
// sent there anywhere else: the command fails.
func TestCloseAsTheSandboxStartsTellsNothing(t *testing.T) {
	saved := startInitHook
	defer func() { startInitHook = saved }()
	started := make(chan *runInit, 1)
	startInitHook = func(s *Sandbox, v view) (*runInit, error) {
		ri, err := s.startInit(v)
		if err == nil {
			// Slow to start: it has not said ready when the run ends.
			_ = ri.proc.Signal(syscall.SIGSTOP)
			started <- ri
		}
		return ri, err
	}
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		var n notices
		n.listen(sb)
		word := filepath.Join(sb.StateDir(), probeCacheFile)
		if err := os.WriteFile(word, []byte("as a run trusts it\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		marker := filepath.Join(dir, "ran")
		done := make(chan error, 1)
		go func() {
			_, err := runIn(t, sb, ClassAuto, dir, "touch "+marker)
			done <- err
		}()
		ri := <-started
		// The command is on its way to the init.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			ri.mu.Lock()
			sent := len(ri.waiting) > 0
			ri.mu.Unlock()
			if sent || time.Now().After(deadline) {
				break
			}
		}
		sb.Close()
		if err := <-done; err == nil {
			t.Error("a command sent to a sandbox the run ended as it started ran")
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the command ran after the run ended")
		}
		if told := n.said(); len(told) > 0 {
			t.Errorf("the run was told %q", told)
		}
		if sb.bwrapped() {
			if _, err := os.Stat(word); err != nil {
				t.Errorf("bwrap's word was taken back: %v", err)
			}
		}
		// A command after the run's end gets a sandbox of its own:
		// none starts for it.
		if out, err := runIn(t, sb, ClassAuto, dir, "echo after"); err != nil || strings.TrimSpace(out) != "after" {
			t.Errorf("a command after the run's end: %v %q", err, out)
		}
		sb.perRun.mu.Lock()
		started := len(sb.perRun.inits)
		sb.perRun.mu.Unlock()
		if started > 0 {
			t.Error("a run's sandbox started after the run ended")
		}
	})
}

// A command whose start fails for itself (a descriptor closed before it
// was sent) fails at once, not after waiting for its sandbox to end.
func TestBadDescriptorFailsAtOnce(t *testing.T) {
	saved := killBound
	killBound = time.Hour // what a wait for the sandbox's end would take
	defer func() { killBound = saved }()
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		if out, err := runIn(t, sb, ClassAuto, dir, "true"); err != nil {
			t.Fatal(err, out)
		}
		closed, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		closed.Close()
		done := make(chan error, 1)
		go func() {
			var out bytes.Buffer
			done <- sb.Command(context.Background(), Spec{Path: "/bin/true", Dir: dir, Stdin: closed, Stdout: &out, Stderr: &out, Class: ClassAuto, Writable: []string{dir}}).Run()
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Error("a command with a closed stdin ran")
			}
		case <-time.After(time.Minute):
			t.Fatal("a command with a closed stdin hangs")
		}
		if out, err := runIn(t, sb, ClassAuto, dir, "echo next"); err != nil || strings.TrimSpace(out) != "next" {
			t.Errorf("the next command: %v %q", err, out)
		}
	})
}

// An init that runs but never becomes ready fails no command: those sent
// to it while it started, and every one after them, get a sandbox of
// their own, and the run is told why once (by a command, never by a start
// ahead), under either mechanism.
func TestInitThatNeverBecomesReadyFallsBack(t *testing.T) {
	saved := failStart
	failStart = true
	defer func() { failStart = saved }()
	for _, ahead := range []bool{true, false} {
		t.Run(map[bool]string{true: "started-ahead", false: "started-by-a-command"}[ahead], func(t *testing.T) {
			eachPerRun(t, func(t *testing.T, sb *Sandbox) {
				var n notices
				n.listen(sb)
				dir := t.TempDir()
				if ahead {
					sb.initOf(Spec{Class: ClassAuto, Writable: []string{dir}}, true)
				}
				// Half of them with an environment larger than the
				// socket holds: their sends wait on an init that ends.
				big := []string{"PATH=/usr/bin:/bin"}
				for i := range 8 {
					big = append(big, fmt.Sprintf("BIG%d=%s", i, strings.Repeat("x", 100<<10)))
				}
				runEach(t, sb, dir, [][]string{big[:1], big, big[:1], big})
				if told := n.said(); len(told) != 1 || !strings.Contains(told[0], "could not start (failing on purpose (a test))") || !strings.Contains(told[0], "a sandbox of its own") {
					t.Errorf("told %q", told)
				}
				if !sb.perRun.off {
					t.Error("the run's sandbox is still on")
				}
			})
		})
	}
}

// An init that says nothing past the start timeout is killed, with all
// it started, and fails no command: those sent to it while it started,
// and every one after them, get a sandbox of their own, and the run is
// told why once, under either mechanism.
func TestInitSilentPastTheStartTimeoutFallsBack(t *testing.T) {
	savedStall, savedTimeout := stallStart, initStartTimeout
	stallStart, initStartTimeout = true, 300*time.Millisecond
	defer func() { stallStart, initStartTimeout = savedStall, savedTimeout }()
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		var n notices
		n.listen(sb)
		dir := t.TempDir()
		path := []string{"PATH=/usr/bin:/bin"}
		runEach(t, sb, dir, [][]string{path, path, path})
		if told := n.said(); len(told) != 1 || !strings.Contains(told[0], "could not start (the init did not start within 300ms)") || !strings.Contains(told[0], "a sandbox of its own") {
			t.Errorf("told %q", told)
		}
		if !sb.perRun.off {
			t.Error("the run's sandbox is still on")
		}
		// The silent init is gone, and nothing it started is left: no
		// process names the view's directory (the init's configuration
		// does).
		deadline := time.Now().Add(5 * time.Second)
		for {
			left := processesNaming(t, dir)
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("left running: %q", left)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// processesNaming are the command lines of the processes whose command
// line holds s.
func processesNaming(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			out = append(out, e.Name()+": "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// runEach runs one command at once for each environment, in dir: each must
// print what it was asked to.
func runEach(t *testing.T, sb *Sandbox, dir string, envs [][]string) {
	t.Helper()
	var wg sync.WaitGroup
	for i, env := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out bytes.Buffer
			spec := Spec{Path: "/bin/sh", Args: []string{"-c", "echo ran"}, Dir: dir, Env: env, Stdout: &out, Stderr: &out, Class: ClassAuto, Writable: []string{dir}}
			err := sb.Command(context.Background(), spec).Run()
			if err != nil || strings.TrimSpace(out.String()) != "ran" {
				t.Errorf("command %d: %v %q", i, err, out.String())
			}
		}()
	}
	wg.Wait()
}

// Killing an init takes its children with it: bwrap's child waits for
// bwrap's word before its parent-death signal is set, so bwrap killed
// alone in between would leave it waiting forever.
func TestKilledInitTakesItsChildren(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	(&runInit{proc: cmd.Process}).kill()
	_ = cmd.Wait()
	// Dead once a zombie: hitl is not its parent, who reaps it is not
	// this test's matter.
	for deadline := time.Now().Add(5 * time.Second); !deadOrGone(child); {
		if time.Now().After(deadline) {
			t.Fatalf("the init's child %d is left running", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// deadOrGone says whether pid is a zombie or no more.
func deadOrGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f, err := statFields(data)
	return err == nil && len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// A run that ends as its sandbox starts ahead leaves nothing behind,
// however far the start got.
func TestCloseAsTheSandboxStartsLeavesNothing(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		var dirs []string
		for i := range 20 {
			s, err := New(sb.mode, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			dirs = append(dirs, dir)
			s.Prepare(Spec{Class: ClassAuto, Writable: []string{dir}})
			time.Sleep(time.Duration(i%10) * time.Millisecond)
			s.Close()
		}
		deadline := time.Now().Add(5 * time.Second)
		for _, dir := range dirs {
			for left := processesNaming(t, dir); len(left) > 0; left = processesNaming(t, dir) {
				if time.Now().After(deadline) {
					t.Fatalf("left running: %q", left)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	})
}
