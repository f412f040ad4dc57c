//go:build linux

package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
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
			r := startHitlState(t, dir, t.TempDir(), "exec", "--yolo", "agent.yaml")
			r.waitFile(t, "started")
			if err := r.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			r.exit(t, 5*time.Second)
			deadline := time.Now().Add(5 * time.Second)
			for len(runningIn(dir)) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if left := runningIn(dir); len(left) > 0 {
				t.Errorf("left running after hitl was killed: %v", left)
			}
		})
	}
}
