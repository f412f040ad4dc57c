//go:build unix

package shell

import (
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/sandbox"
)

func TestKillAllEndsRunningCommands(t *testing.T) {
	// The command ignores SIGTERM, so only KillAll's SIGKILL ends it
	// before its 30 s timeout and 60 s grace.
	waitIdle(t)
	tool := New(Options{Sandbox: testSandbox(t), Yolo: true, Grace: time.Minute})
	done := make(chan exec.Result, 1)
	go func() {
		res, _ := call(t, tool, map[string]any{"cmd": "trap '' TERM; echo started; sleep 30"})
		done <- res
	}()
	waitRunning(t)
	time.Sleep(100 * time.Millisecond) // let the shell set its trap
	sandbox.KillAll()
	select {
	case res := <-done:
		if !strings.Contains(res.Text, "SIGKILL") {
			t.Errorf("result %q, want it killed by SIGKILL", res.Text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KillAll did not end the command")
	}
}

// waitRunning waits until a command's process group is running.
// waitIdle waits until no command of an earlier test is still being
// stopped: waitRunning could see it, and KillAll end it, not the next.
func waitIdle(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); sandbox.Running() > 0; {
		if time.Now().After(deadline) {
			t.Fatal("an earlier command is still running")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitRunning(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if sandbox.Running() > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
