package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mechanisms are the sandboxes this machine has, each a subtest.
func eachMechanism(t *testing.T, fn func(t *testing.T, sb *Sandbox)) {
	for _, mode := range []Mode{Bwrap, Landlock} {
		// The run's sandbox (one per run and view), and a sandbox per
		// command: the fallback where the former cannot start.
		for _, perRun := range []bool{true, false} {
			name := string(mode)
			if !perRun {
				name += "/per-command"
			}
			t.Run(name, func(t *testing.T) {
				saved := perRunEnabled
				perRunEnabled = perRun
				defer func() { perRunEnabled = saved }()
				state := t.TempDir()
				sb, err := New(mode, state)
				if err != nil {
					t.Skipf("no %s on this machine: %v", mode, err)
				}
				t.Cleanup(sb.Close)
				fn(t, sb)
			})
		}
	}
}

func runIn(t *testing.T, sb *Sandbox, access Class, dir string, script string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	c := sb.Command(context.Background(), Spec{
		Path: "/bin/sh", Args: []string{"-c", script}, Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin"}, Stdout: &out, Stderr: &out, Class: access, Writable: []string{dir},
	})
	err := c.Run()
	return out.String(), err
}

func TestChildCannotReachHitl(t *testing.T) {
	// Were the sandbox to fail, the test must not leave the machine changed.
	if pattern, err := os.ReadFile("/proc/sys/kernel/core_pattern"); err == nil {
		t.Cleanup(func() {
			if now, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); string(now) != string(pattern) {
				_ = os.WriteFile("/proc/sys/kernel/core_pattern", pattern, 0o644)
			}
		})
	}
	eachMechanism(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		pid := strconv.Itoa(os.Getpid())
		key := filepath.Join(sb.StateDir(), "session.key")
		if err := os.WriteFile(key, []byte("secret-key"), 0o600); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, script string
		}{
			{"write hitl's stdin", "echo '\"once\"' > /proc/" + pid + "/fd/0"},
			{"read hitl's stdin", "cat /proc/" + pid + "/fd/0"},
			{"read hitl's memory", "head -c1 /proc/" + pid + "/mem"},
			{"open the terminal", "echo x > /dev/tty"},
			{"read the state dir", "cat " + key},
			{"signal hitl", "kill -0 " + pid},
			{"make the terminal's device node", "mknod ./pts c 136 0"},
			{"unmount /proc", "umount /proc"},
			{"set the kernel's core pattern", "echo '|/bin/false' > /proc/sys/kernel/core_pattern"},
			{"set a uevent helper", "echo /bin/false > /sys/kernel/uevent_helper"},
			{"unmount what hides the state dir", "umount " + sb.StateDir() + "; cat " + key},
		}
		for _, access := range []Class{ClassApproved, ClassAuto} {
			for _, tt := range tests {
				out, err := runIn(t, sb, access, dir, tt.script)
				if err == nil {
					t.Errorf("access %d: %s: succeeded (%q)", access, tt.name, out)
				}
				if strings.Contains(out, "secret-key") {
					t.Errorf("access %d: %s: read the key", access, tt.name)
				}
			}
		}
	})
}

func TestUnseenWritesOnlyItsDirectory(t *testing.T) {
	eachMechanism(t, func(t *testing.T, sb *Sandbox) {
		dir, other := t.TempDir(), t.TempDir()
		if out, err := runIn(t, sb, ClassAuto, dir, "echo ok > here"); err != nil {
			t.Fatalf("write in its dir: %v %s", err, out)
		}
		if _, err := runIn(t, sb, ClassAuto, dir, "echo no > "+other+"/there"); err == nil {
			t.Errorf("an unseen command wrote outside its directory")
		}
		if out, err := runIn(t, sb, ClassApproved, dir, "echo ok > "+other+"/there"); err != nil {
			t.Errorf("a seen command could not write where the user can: %v %s", err, out)
		}
		if out, err := runIn(t, sb, ClassAuto, dir, "echo x > /dev/null && ls / >/dev/null && cat /etc/hostname"); err != nil {
			t.Errorf("ordinary reads failed: %v %s", err, out)
		}
	})
}

func TestStateDirInsideTheWorkingDirStaysHidden(t *testing.T) {
	for _, mode := range []Mode{Bwrap, Landlock} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			sb, err := New(mode, filepath.Join(dir, ".state", "hitl"))
			if err != nil {
				t.Skipf("no %s on this machine: %v", mode, err)
			}
			if err := os.WriteFile(filepath.Join(sb.StateDir(), "session.key"), []byte("secret-key"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "src"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, access := range []Class{ClassApproved, ClassAuto} {
				out, err := runIn(t, sb, access, dir, "cat .state/hitl/session.key")
				if err == nil || strings.Contains(out, "secret-key") {
					t.Errorf("access %d: read the key in the state dir inside the working dir: %q", access, out)
				}
				if _, err := runIn(t, sb, access, dir, "echo x > .state/hitl/planted"); err == nil {
					t.Errorf("access %d: wrote into the state dir", access)
				}
				if out, err := runIn(t, sb, access, dir, "echo ok > src/file && cat src/file"); err != nil {
					t.Errorf("access %d: could not write beside the state dir: %v %s", access, err, out)
				}
			}
		})
	}
}

// As root, a child keeps no capability that reaches past the sandbox (nor
// can get one back: its bounding set holds no more): a
// command nobody saw keeps none, one a person saw keeps the file-access
// ones (seenCaps), and neither gets more by executing a program (no new
// privileges: setuid bits and file capabilities grant nothing).
func TestChildCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("capabilities are root's")
	}
	var want uint64
	for _, c := range seenCaps {
		want |= 1 << c
	}
	eachMechanism(t, func(t *testing.T, sb *Sandbox) {
		for _, tt := range []struct {
			access Class
			want   uint64
		}{{ClassAuto, 0}, {ClassApproved, want}} {
			// sh runs grep: what a program the child executes gets.
			out, err := runIn(t, sb, tt.access, t.TempDir(), "grep -E '^(Cap(Eff|Prm|Inh|Amb|Bnd)|NoNewPrivs)' /proc/self/status")
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if !strings.Contains(out, "NoNewPrivs:\t1") {
				t.Errorf("access %d: no_new_privs is not set:\n%s", tt.access, out)
			}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if strings.HasPrefix(line, "NoNewPrivs") {
					continue
				}
				name, hex, _ := strings.Cut(line, ":")
				got, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
				if err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				if got&^tt.want != 0 {
					t.Errorf("access %d: %s is %#x, more than %#x", tt.access, name, got, tt.want)
				}
			}
		}
	})
}

// A command a person approved may replace bwrap on disk; the run keeps
// starting its children with the bwrap it found at the start.
func TestReplacedBwrapIsNotRun(t *testing.T) {
	real, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap is not installed")
	}
	bin := t.TempDir()
	data, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	sb, err := New(Bwrap, t.TempDir())
	if err != nil {
		t.Skipf("no bwrap here: %v", err)
	}
	trojan := filepath.Join(t.TempDir(), "trojan-ran")
	if err := os.Remove(filepath.Join(bin, "bwrap")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte("#!/bin/sh\ntouch "+trojan+"\nshift $#\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, sb, ClassAuto, t.TempDir(), "echo ok"); err != nil || out != "ok\n" {
		t.Fatalf("%v %q", err, out)
	}
	if _, err := os.Stat(trojan); err == nil {
		t.Error("the replaced bwrap ran")
	}
}

// The dynamic loader's variables reach the child, never the wrapper that
// runs before the sandbox is in place (bwrap, the Landlock helper): a
// library the model wrote would run there unconfined.
func TestLoaderVariablesSkipTheWrapper(t *testing.T) {
	eachMechanism(t, func(t *testing.T, sb *Sandbox) {
		var out strings.Builder
		c := sb.Command(context.Background(), Spec{
			Path: "/bin/sh", Args: []string{"-c", `echo "$LD_PRELOAD"`}, Dir: t.TempDir(),
			Env:    []string{"PATH=/usr/bin:/bin", "LD_PRELOAD=/nonexistent/evil.so"},
			Stdout: &out, Stderr: &out, Class: ClassApproved,
		})
		if err := c.Run(); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		// Each loader that tries the library says it "cannot be
		// preloaded": the child's (sh) only, not the wrapper's too.
		if got := out.String(); strings.Count(got, "cannot be preloaded") != 1 || !strings.Contains(got, "\n/nonexistent/evil.so") {
			t.Errorf("output %q", got)
		}
	})
}

// A command whose context ends gets SIGTERM, and can act on it (clean up)
// before the SIGKILL that ends whatever is left; under bwrap too, where the
// program shares its process group with the namespace's init, which must
// not be the one signalled (the namespace would die with it, the program
// killed unwarned). And what the program would have done next never
// happens.
func TestCancelledCommandGetsSIGTERM(t *testing.T) {
	eachMechanism(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		c := sb.Command(ctx, Spec{
			Path: "/bin/sh", Args: []string{"-c", `trap 'echo cleaned > cleaned; exit 143' TERM; echo up > up; sleep 4 & wait; touch late`},
			Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Class: ClassApproved,
		})
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		for range 200 { // the trap is set once "up" is written
			if _, err := os.Stat(filepath.Join(dir, "up")); err == nil {
				break
			}
			sleepBriefly()
		}
		cancel()
		_ = c.Wait()
		if _, err := os.Stat(filepath.Join(dir, "cleaned")); err != nil {
			t.Errorf("the program never got SIGTERM (no clean-up): %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "late")); err == nil {
			t.Errorf("the program went on after it was stopped")
		}
	})
}

func sleepBriefly() { time.Sleep(10 * time.Millisecond) }
