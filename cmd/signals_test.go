//go:build !windows

package cmd_test

import (
	"bytes"
	"errors"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/internal/ptytest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests run the real hitl (installed on PATH by testscript's TestMain)
// and signal it, as a person pressing Ctrl-C or a CI runner stopping a job
// would, and check the run stops cleanly and resumes.

// stubbornAgent runs a command that ignores SIGTERM, so the first Ctrl-C
// has to wait out the shell toolset's grace period before SIGKILL.
const stubbornAgent = `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: shell, arguments: {cmd: "trap '' TERM; echo $$ > pid; touch started; sleep 30"}}]
      - text: never
agents:
  root:
    model: m
    toolsets: [{type: shell}]
`

type signalRun struct {
	cmd    *exec.Cmd
	dir    string
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan error
}

func startHitl(t *testing.T, dir string, args ...string) *signalRun {
	t.Helper()
	return startHitlState(t, dir, filepath.Join(dir, "state"), args...)
}

// startHitlState is startHitl with the state dir (XDG_STATE_HOME) state.
func startHitlState(t *testing.T, dir, state string, args ...string) *signalRun {
	t.Helper()
	return startHitlEnv(t, dir, state, nil, args...)
}

// startHitlEnv is startHitlState with env added to hitl's environment.
func startHitlEnv(t *testing.T, dir, state string, env []string, args ...string) *signalRun {
	t.Helper()
	hitl, err := exec.LookPath("hitl")
	if err != nil {
		t.Fatalf("hitl is not on PATH (testscript's TestMain installs it): %v", err)
	}
	r := &signalRun{dir: dir, done: make(chan error, 1)}
	r.cmd = exec.Command(hitl, args...)
	r.cmd.Dir = dir
	r.cmd.Env = append(append(filteredEnv(), "XDG_STATE_HOME="+state), env...)
	r.cmd.Stdin = strings.NewReader("")
	r.cmd.Stdout = &r.stdout
	r.cmd.Stderr = &r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
			<-r.done
		}
	})
	return r
}

// waitFile waits (up to 10 s) until the command has written name.
func (r *signalRun) waitFile(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(r.dir, name)); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared; stderr:\n%s", name, r.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exit waits (up to limit) for hitl and returns its exit code.
func (r *signalRun) exit(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case err := <-r.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		t.Fatalf("hitl still running after %v; stderr:\n%s", limit, r.stderr.String())
		return -1
	}
}

// runningIn lists the processes still running (a zombie runs no more) in
// dir, which only the run's commands use. A sandboxed command's pid is its
// own PID namespace's, so the commands are found by their directory.
func runningIn(dir string) []string {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err != nil || cwd != real {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 0 && fields[0] != "Z" {
			cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
			_ = syscall.Kill(atoi(e.Name()), syscall.SIGKILL)
		}
	}
	return out
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// A second Ctrl-C exits at once: without waiting out the grace period of a
// command that ignores SIGTERM, killing it, keeping the session.
func TestSecondCtrlCExitsAtOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(stubbornAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startHitl(t, dir, "exec", "--yolo", "--session", "s.jsonl", "agent.yaml")
	r.waitFile(t, "started")
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the first is being handled: SIGTERM sent, ignored
	start := time.Now()
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The grace period is 2 s: well before it ends.
	if code := r.exit(t, 5*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, r.stderr.String())
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("exited %v after the second Ctrl-C, want at once", d)
	}
	if !strings.Contains(r.stderr.String(), "interrupted again") {
		t.Errorf("stderr:\n%s", r.stderr.String())
	}
	time.Sleep(100 * time.Millisecond)
	if left := runningIn(dir); len(left) > 0 {
		t.Errorf("the command is still running: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "s.jsonl")); err != nil {
		t.Errorf("the session was not kept: %v", err)
	}
}

// stubbornAllowedAgent is stubbornAgent with a line an allow rule runs
// unasked, in the run's sandbox, whose temp dir (TMPDIR) the run made.
const stubbornAllowedAgent = `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: shell, arguments: {cmd: "./stubborn"}}]
      - text: never
agents:
  root:
    model: m
    toolsets: [{type: shell}]
permissions:
  allow: ["shell:cmd=./stubborn"]
`

// A second Ctrl-C, which exits without closing the run's sandbox, still
// removes the temp dir the run made for the lines it runs unasked.
func TestSecondCtrlCRemovesTheRunsTempDir(t *testing.T) {
	if sb, err := sandbox.New(sandbox.Auto, t.TempDir()); err != nil || !sb.AllowRulesApply() {
		t.Skip("no sandbox here in which allow rules apply: every line is asked")
	} else {
		sb.Close()
	}
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(stubbornAllowedAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	stubborn := "#!/bin/sh\ntrap '' TERM\ntouch started\nsleep 30\n"
	if err := os.WriteFile(filepath.Join(dir, "stubborn"), []byte(stubborn), 0o755); err != nil {
		t.Fatal(err)
	}
	r := startHitlEnv(t, dir, filepath.Join(dir, "state"), []string{"TMPDIR=" + tmp}, "exec", "agent.yaml")
	r.waitFile(t, "started")
	made, _ := filepath.Glob(filepath.Join(tmp, "hitl-cmd-*"))
	if len(made) == 0 {
		t.Fatal("the run made no temp dir in TMPDIR for its line")
	}
	for range 2 {
		if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // the first: SIGTERM sent, ignored
	}
	if code := r.exit(t, 5*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, r.stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("left in TMPDIR after the second Ctrl-C: %v", left)
	}
	time.Sleep(100 * time.Millisecond)
	if left := runningIn(dir); len(left) > 0 {
		t.Errorf("the command is still running: %v", left)
	}
}

// stepsAgent: step 1 appends to a log, step 2 waits to be stopped (the
// second time it is run it finishes), then the run ends with text.
const stepsAgent = `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: shell, arguments: {cmd: "echo one >> log"}}]
      - tool_calls: [{name: shell, arguments: {cmd: "echo two >> log; if [ -e started ]; then echo again; else sh -c 'echo $$ > pid; exec sleep 30' & while [ ! -s pid ]; do sleep 0.01; done; touch started; wait; fi"}}]
      - text: "done: {{.Last}}"
agents:
  root:
    model: m
    toolsets: [{type: shell}]
`

// A run stopped by Ctrl-C, SIGTERM or SIGHUP (the terminal closed) leaves
// no command running and resumes from its last completed step: the
// finished step 1 is not run again, the interrupted step 2 is.
func TestResumeAfterSignal(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(stepsAgent), 0o644); err != nil {
				t.Fatal(err)
			}
			r := startHitl(t, dir, "exec", "--yolo", "--session", "s.jsonl", "agent.yaml")
			r.waitFile(t, "started")
			if err := r.cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			if code := r.exit(t, 10*time.Second); code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, r.stderr.String())
			}
			if !strings.Contains(r.stderr.String(), "hitl resume s.jsonl") {
				t.Errorf("no resume command on stderr:\n%s", r.stderr.String())
			}
			if _, err := os.ReadFile(filepath.Join(dir, "pid")); err != nil {
				t.Errorf("the command's child wrote no pid: %v", err)
			} else if left := runningIn(dir); len(left) > 0 {
				t.Errorf("the command's child is still running: %v", left)
			}

			r = startHitl(t, dir, "resume", "--yolo", "s.jsonl")
			if code := r.exit(t, 10*time.Second); code != 0 {
				t.Fatalf("resume: exit %d; stderr:\n%s", code, r.stderr.String())
			}
			if got := r.stdout.String(); got != "done: again\n" {
				t.Errorf("resume stdout %q, want %q", got, "done: again\n")
			}
			log, err := os.ReadFile(filepath.Join(dir, "log"))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(log); got != "one\ntwo\ntwo\n" {
				t.Errorf("log %q: want step 1 once and step 2 twice", got)
			}
		})
	}
}

// hitl ask --default: the default is offered on the terminal, so Enter
// takes it; a yes/no question (consent) takes keys only once it has been
// on screen for a moment.
func TestAskDefaultOnTTY(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		wait string
		out  string
		code int
	}{
		{"number", []string{"--schema", `{"type":"integer","minimum":1}`, "--default", "8080"}, "(Esc to dismiss)", "8080\n", 0},
		{"choice", []string{"--choice", "staging", "--choice", "production", "--default", "production"}, "production", "production\n", 0},
		// A yes/no is answered by the exit code alone.
		{"confirm yes", []string{"--confirm", "--default", "true"}, "(Y/n)", "", 0},
		{"confirm no", []string{"--confirm", "--default", "false"}, "(y/N)", "", 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := startTTY(t, false, append([]string{"ask", "Which?"}, tt.args...)...)
			if !r.ExpectSettled(tt.wait) {
				t.FailNow()
			}
			r.Send(ptytest.KeyEnter)
			if code := r.wait(); code != tt.code {
				t.Fatalf("exit %d, want %d; screen:\n%s", code, tt.code, r.Screen())
			}
			if got := r.stdout.String(); got != tt.out {
				t.Errorf("stdout %q, want %q; screen:\n%s", got, tt.out, r.Screen())
			}
		})
	}
}
