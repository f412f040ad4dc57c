//go:build linux

package cmd_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/internal/ptytest"
)

// spoofAgent runs the attacker that draws a fake question on the person's
// terminal, then a command that must be asked.
const spoofAgent = `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: shell, arguments: {cmd: "attack tty PTS"}}]
      - tool_calls: [{name: shell, arguments: {cmd: "touch PWNED"}}]
      - text: done
agents:
  root:
    model: m
    toolsets: [{type: shell}]
permissions:
  allow: ["shell:cmd=attack *"]
`

// marginsReset is the part of the terminal reset hitl writes before each
// question that undoes a scroll region (prompt/tty).
const marginsReset = "\x1b7\x1b[?6l\x1b[r\x1b8"

// A program an allow rule lets run, or one approved (--yolo), cannot draw
// on the person's terminal (DESIGN §12): neither /dev/tty (it has no
// controlling terminal) nor /dev/pts/N by path. Without the sandbox it can,
// and hitl then resets what it left before drawing the next question.
func TestSandboxTerminalSpoof(t *testing.T) {
	nobwrap, err := pathWithoutBwrap(os.Getenv("PATH"), filepath.Join(t.TempDir(), "nobwrap"))
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		name string
		mech string // "" for the control run without a sandbox
		args []string
	}
	runs := []run{{name: "no sandbox", args: []string{"--no-sandbox"}}}
	for _, mech := range []string{"bwrap", "landlock"} {
		if ok, _ := sandboxCondition(mech); !ok {
			t.Logf("this machine cannot confine commands with %s: its runs are skipped", mech)
			continue
		}
		runs = append(runs, run{mech + " auto-allowed", mech, nil}, run{mech + " approved", mech, []string{"--yolo"}})
	}
	for _, tt := range runs {
		t.Run(tt.name, func(t *testing.T) {
			var env []string
			if tt.mech == "landlock" {
				env = []string{"PATH=" + nobwrap}
			}
			args := append([]string{"exec", "--prompt", "tty"}, tt.args...)
			tm := ptytest.New(t)
			agent := strings.Replace(spoofAgent, "PTS", tm.Tty().Name(), 1)
			r := startTTYAgentEnv(t, agent, tm, false, env, append(args, "agent.yaml")...)
			if tt.args != nil && tt.args[0] == "--yolo" {
				// --yolo runs touch PWNED too: no question comes.
				if code := r.wait(); code != 0 {
					t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
				}
			} else {
				r.mustExpectSettled("Run this command?")
				r.Send(ptytest.KeyEsc)
				if code := r.wait(); code != 0 {
					t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
				}
			}
			raw := r.Raw()
			spoofed := strings.Contains(raw, "SPOOFED-BY-ATTACK")
			if tt.mech == "" {
				if !spoofed {
					t.Fatalf("without a sandbox the attacker did not reach the terminal: the test shows nothing; screen:\n%s", r.Screen())
				}
				if strings.LastIndex(raw, marginsReset) < strings.LastIndex(raw, "SPOOFED-BY-ATTACK") {
					t.Errorf("the question was drawn without resetting the terminal the attacker left")
				}
				return
			}
			if spoofed {
				t.Errorf("under %s the attacker drew on the terminal; screen:\n%s", tt.mech, r.Screen())
			}
			if !strings.Contains(raw, "terminal /dev/tty: refused") {
				t.Errorf("the attacker did not run; screen:\n%s", r.Screen())
			}
			if _, err := os.Stat(filepath.Join(r.cmd.Dir, "PWNED")); err == nil && tt.args == nil {
				t.Errorf("the dismissed command ran")
			}
		})
	}
}

// runWith are the live processes whose command line names path (the run's
// sandbox's init names the state dir in its view), killed as they are
// found when kill is set.
func runWith(path string, kill bool) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(path)) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		if kill {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return out
}

// hitl killed outright (SIGKILL: no chance to stop anything) leaves no
// command behind, under either mechanism: bwrap dies with its parent, and
// a Landlock child is killed when hitl dies.
func TestKilledHitlLeavesNoCommand(t *testing.T) {
	nobwrap, err := pathWithoutBwrap(os.Getenv("PATH"), filepath.Join(t.TempDir(), "nobwrap"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mech := range []string{"bwrap", "landlock"} {
		t.Run(mech, func(t *testing.T) {
			if ok, _ := sandboxCondition(mech); !ok {
				t.Skipf("this machine cannot confine commands with %s", mech)
			}
			if mech == "landlock" {
				t.Setenv("PATH", nobwrap)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(stubbornAgent), 0o644); err != nil {
				t.Fatal(err)
			}
			// The state dir outside the working dir: under Landlock a new
			// file cannot be made directly in a directory on the way to it.
			state := t.TempDir()
			r := startHitlState(t, dir, state, "exec", "--yolo", "agent.yaml")
			r.waitFile(t, "started")
			if len(runWith(state, false)) == 0 {
				t.Errorf("the command did not run in the run's sandbox (no init names %s)", state)
			}
			if err := r.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			r.exit(t, 5*time.Second)
			deadline := time.Now().Add(5 * time.Second)
			for len(runningIn(dir))+len(runWith(state, false)) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if left := runningIn(dir); len(left) > 0 {
				t.Errorf("left running after hitl was killed: %v", left)
			}
			// The run's sandbox too: its init and the first process of
			// each command's PID namespace.
			if left := runWith(state, true); len(left) > 0 {
				t.Errorf("the run's sandbox outlived hitl: %v", left)
			}
		})
	}
}
