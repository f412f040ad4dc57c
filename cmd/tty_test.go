//go:build !windows

package cmd_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	expect "github.com/Netflix/go-expect"
	pseudotty "github.com/creack/pty"
	"github.com/hinshun/vt10x"
	"golang.org/x/term"
)

// These tests run the real hitl (this test binary, installed on PATH as
// hitl by testscript's TestMain) inside a pseudo-terminal, whose output
// goes through a vt10x screen that answers cursor position queries.

const ttyAgent = `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: user_prompt, arguments: {message: "Which environment?", schema: {type: string, enum: [dev, staging, prod]}}}]
      - text: "deploying to {{.Last.content}}"
agents:
  root:
    model: m
    toolsets:
      - type: user_prompt
`

const (
	ttyDown  = "\x1b[B"
	ttyEnter = "\r"
	ttyCtrlC = "\x03"
)

type ttyRun struct {
	t      *testing.T
	c      *expect.Console
	screen vt10x.Terminal
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer // when stderr is not the terminal
	before *term.State
	done   chan error
}

// startTTY starts hitl with args in a new session whose controlling
// terminal is a pseudo-terminal. With pipedStdin, stdin is a pipe and only
// stderr is the terminal (the git-hook case: hitl must open /dev/tty).
func startTTY(t *testing.T, pipedStdin bool, args ...string) *ttyRun {
	t.Helper()
	hitl, err := exec.LookPath("hitl")
	if err != nil {
		t.Fatalf("hitl is not on PATH (testscript's TestMain installs it): %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(ttyAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	ptm, pts, err := pseudotty.Open()
	if err != nil {
		t.Fatal(err)
	}
	screen := vt10x.New(vt10x.WithWriter(pts), vt10x.WithSize(100, 40))
	c, err := expect.NewConsole(expect.WithStdin(ptm), expect.WithStdout(screen), expect.WithCloser(ptm, pts), expect.WithDefaultTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := pseudotty.Setsize(c.Tty(), &pseudotty.Winsize{Cols: 100, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	r := &ttyRun{t: t, c: c, screen: screen, done: make(chan error, 1)}
	r.before = r.termState()
	cmd := exec.Command(hitl, args...)
	cmd.Dir = dir
	cmd.Env = append(filteredEnv(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "TERM=xterm")
	cmd.Stdout = &r.stdout
	cmd.Stderr = c.Tty()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 2}
	if pipedStdin {
		cmd.Stdin = strings.NewReader("")
	} else {
		cmd.Stdin = c.Tty()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.cmd = cmd
	// The child has the terminal now; our copy would keep it from
	// reading end of file when the child exits.
	c.Tty().Close()
	go func() { r.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-r.done
		}
	})
	return r
}

func filteredEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CI=") || strings.HasPrefix(kv, "HITL_PROMPT=") || strings.HasPrefix(kv, "NO_COLOR=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// termState reads the terminal's modes through a descriptor of its own.
func (r *ttyRun) termState() *term.State {
	r.t.Helper()
	f, err := os.OpenFile(r.c.Tty().Name(), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	st, err := term.GetState(int(f.Fd()))
	if err != nil {
		r.t.Fatal(err)
	}
	return st
}

func (r *ttyRun) expect(s string) {
	r.t.Helper()
	if out, err := r.c.ExpectString(s); err != nil {
		r.t.Fatalf("waiting for %q: %v; output:\n%q", s, err, out)
	}
}

func (r *ttyRun) send(keys ...string) {
	r.t.Helper()
	for _, k := range keys {
		if _, err := r.c.Send(k); err != nil {
			r.t.Fatalf("send %q: %v", k, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wait reads the terminal to its end and returns hitl's exit code; it checks
// that the terminal's modes are back and no process of hitl's is left.
func (r *ttyRun) wait() int {
	r.t.Helper()
	if _, err := r.c.ExpectEOF(); err != nil {
		r.t.Errorf("reading the terminal to its end: %v", err)
	}
	var err error
	select {
	case err = <-r.done:
	case <-time.After(10 * time.Second):
		r.t.Fatalf("hitl did not exit; screen:\n%s", r.screen.String())
	}
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	if after := r.termState(); !reflect.DeepEqual(r.before, after) {
		r.t.Errorf("terminal modes not restored when hitl exited")
	}
	if err := syscall.Kill(-r.cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		r.t.Errorf("a process of hitl's group is left: kill -0 says %v", err)
	}
	return code
}

func (r *ttyRun) screenText() string {
	var lines []string
	for _, l := range strings.Split(r.screen.String(), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

func TestTTYExecAnswersWithArrows(t *testing.T) {
	r := startTTY(t, false, "exec", "--prompt", "tty", "agent.yaml")
	r.expect("prod")
	r.send(ttyDown, ttyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; stdout %q; screen:\n%s", code, r.stdout.String(), r.screenText())
	}
	if got := r.stdout.String(); got != "deploying to staging\n" {
		t.Errorf("stdout = %q", got)
	}
	if !strings.Contains(r.screenText(), "Which environment? staging") {
		t.Errorf("screen:\n%s", r.screenText())
	}
}

func TestTTYExecAutoOnATerminal(t *testing.T) {
	r := startTTY(t, false, "exec", "agent.yaml")
	r.expect("prod")
	r.send(ttyDown, ttyDown, ttyEnter)
	if code := r.wait(); code != 0 || r.stdout.String() != "deploying to prod\n" {
		t.Fatalf("exit %d, stdout %q; screen:\n%s", code, r.stdout.String(), r.screenText())
	}
}

func TestTTYExecCtrlCExits130(t *testing.T) {
	r := startTTY(t, false, "exec", "--prompt", "tty", "agent.yaml")
	r.expect("prod")
	r.send(ttyCtrlC)
	code := r.wait()
	t.Logf("screen:\n%s", r.screenText())
	if code != 130 {
		t.Fatalf("exit %d, want 130; screen:\n%s", code, r.screenText())
	}
	if r.stdout.Len() != 0 {
		t.Errorf("stdout = %q", r.stdout.String())
	}
}

func TestTTYExecSIGTERMExits143(t *testing.T) {
	r := startTTY(t, false, "exec", "--prompt", "tty", "agent.yaml")
	r.expect("prod")
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := r.wait()
	t.Logf("screen:\n%s", r.screenText())
	if code != 143 {
		t.Fatalf("exit %d, want 143; screen:\n%s", code, r.screenText())
	}
}

func TestTTYExecStdinPipedUsesDevTTY(t *testing.T) {
	r := startTTY(t, true, "exec", "--prompt", "tty", "agent.yaml")
	r.expect("prod")
	r.send(ttyDown, ttyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.screenText())
	}
	if got := r.stdout.String(); got != "deploying to staging\n" {
		t.Errorf("stdout = %q", got)
	}
}

func TestTTYExecPromptTimeoutStops(t *testing.T) {
	start := time.Now()
	r := startTTY(t, false, "exec", "--prompt", "tty", "--prompt-timeout", "1s", "agent.yaml")
	r.expect("prod")
	code := r.wait()
	t.Logf("screen:\n%s", r.screenText())
	if code != 4 {
		t.Fatalf("exit %d, want 4; screen:\n%s", code, r.screenText())
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("took %v", d)
	}
	if !strings.Contains(r.screenText(), "(no answer)") {
		t.Errorf("screen:\n%s", r.screenText())
	}
}

func TestTTYAskConfirm(t *testing.T) {
	r := startTTY(t, false, "ask", "Deploy to production?", "--confirm")
	r.expect("(y/N)")
	r.send("y", ttyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.screenText())
	}
	if got := r.stdout.String(); got != "true\n" {
		t.Errorf("stdout = %q", got)
	}
}

func TestTTYAskEscDismissesExit3(t *testing.T) {
	r := startTTY(t, true, "ask", "Deploy to production?", "--confirm", "--prompt", "tty")
	r.expect("(y/N)")
	r.send("\x1b")
	if code := r.wait(); code != 3 {
		t.Fatalf("exit %d, want 3; screen:\n%s", code, r.screenText())
	}
}

func TestTTYAskNumber(t *testing.T) {
	r := startTTY(t, false, "ask", "How many replicas?", "--schema", `{"type":"integer","minimum":1}`)
	r.expect("(Esc to dismiss)")
	r.send("0", ttyEnter)
	r.expect("invalid")
	r.send("3", ttyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.screenText())
	}
	if got := r.stdout.String(); got != "3\n" {
		t.Errorf("stdout = %q; screen:\n%s", got, r.screenText())
	}
}
