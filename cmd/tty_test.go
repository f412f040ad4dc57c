//go:build !windows

package cmd_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/term"

	"github.com/hitl-dev/hitl/internal/ptytest"
)

// These tests run the real hitl (this test binary, installed on PATH as
// hitl by testscript's TestMain) inside a ptytest.Terminal.

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

// ttyRun is hitl running on a Terminal as its controlling terminal.
type ttyRun struct {
	*ptytest.Terminal
	t      *testing.T
	cmd    *exec.Cmd
	stdout bytes.Buffer
	before *term.State
	done   chan error
}

// startTTY starts hitl with args in a new session whose controlling
// terminal is a pseudo-terminal. With pipedStdin, stdin is a pipe and only
// stderr is the terminal (the git-hook case: hitl must open /dev/tty).
func startTTY(t *testing.T, pipedStdin bool, args ...string) *ttyRun {
	t.Helper()
	return startTTYAgent(t, ttyAgent, ptytest.New(t), pipedStdin, args...)
}

// startTTYAgent is startTTY with agent.yaml holding agent, on tm.
func startTTYAgent(t *testing.T, agent string, tm *ptytest.Terminal, pipedStdin bool, args ...string) *ttyRun {
	t.Helper()
	return startTTYAgentEnv(t, agent, tm, pipedStdin, nil, args...)
}

// startTTYAgentEnv is startTTYAgent with env added to hitl's environment.
func startTTYAgentEnv(t *testing.T, agent string, tm *ptytest.Terminal, pipedStdin bool, env []string, args ...string) *ttyRun {
	t.Helper()
	hitl, err := exec.LookPath("hitl")
	if err != nil {
		t.Fatalf("hitl is not on PATH (testscript's TestMain installs it): %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &ttyRun{Terminal: tm, t: t, before: tm.Modes(), done: make(chan error, 1)}
	cmd := exec.Command(hitl, args...)
	cmd.Dir = dir
	cmd.Env = append(append(filteredEnv(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "TERM=xterm"), env...)
	cmd.Stdout = &r.stdout
	cmd.Stderr = tm.Tty()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 2}
	if pipedStdin {
		cmd.Stdin = strings.NewReader("")
	} else {
		cmd.Stdin = tm.Tty()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.cmd = cmd
	// The child has the terminal now; our copy would keep it from
	// reading end of file when the child exits.
	tm.Tty().Close()
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

// mustExpectSettled is mustExpect, then waits for the drawing to settle,
// as a person reads a question before answering it.
func (r *ttyRun) mustExpectSettled(s string) {
	r.t.Helper()
	if !r.ExpectSettled(s) {
		r.t.FailNow()
	}
}

// mustExpect waits for s in hitl's output and stops the test if it does
// not come.
func (r *ttyRun) mustExpect(s string) {
	r.t.Helper()
	if !r.Expect(s) {
		r.t.FailNow()
	}
}

// wait reads the terminal to its end and returns hitl's exit code; it checks
// that the terminal's modes are back and no process of hitl's is left.
func (r *ttyRun) wait() int {
	r.t.Helper()
	if err := r.ReadToEnd(); err != nil {
		r.t.Errorf("reading the terminal to its end: %v", err)
	}
	var err error
	select {
	case err = <-r.done:
	case <-time.After(10 * time.Second):
		r.t.Fatalf("hitl did not exit; screen:\n%s", r.Screen())
	}
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	if after := r.Modes(); !reflect.DeepEqual(r.before, after) {
		r.t.Errorf("terminal modes not restored when hitl exited")
	}
	if err := syscall.Kill(-r.cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		r.t.Errorf("a process of hitl's group is left: kill -0 says %v", err)
	}
	return code
}

func TestTTYExecAnswersWithArrows(t *testing.T) {
	r := startTTY(t, false, "exec", "--prompt", "tty", "agent.yaml")
	// The tool-call line names the options too: wait for the question.
	r.mustExpectSettled("(Esc to dismiss)")
	r.Send(ptytest.KeyDown, ptytest.KeyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; stdout %q; screen:\n%s", code, r.stdout.String(), r.Screen())
	}
	if got := r.stdout.String(); got != "deploying to staging\n" {
		t.Errorf("stdout = %q", got)
	}
	if !strings.Contains(r.Screen(), "Which environment? staging") {
		t.Errorf("screen:\n%s", r.Screen())
	}
}

func TestTTYExecAutoOnATerminal(t *testing.T) {
	r := startTTY(t, false, "exec", "agent.yaml")
	r.mustExpectSettled("(Esc to dismiss)")
	r.Send(ptytest.KeyDown, ptytest.KeyDown, ptytest.KeyEnter)
	if code := r.wait(); code != 0 || r.stdout.String() != "deploying to prod\n" {
		t.Fatalf("exit %d, stdout %q; screen:\n%s", code, r.stdout.String(), r.Screen())
	}
}

func TestTTYExecCtrlCExits130(t *testing.T) {
	r := startTTY(t, false, "exec", "--prompt", "tty", "agent.yaml")
	r.mustExpect("prod")
	r.Send(ptytest.KeyCtrlC)
	code := r.wait()
	t.Logf("screen:\n%s", r.Screen())
	if code != 130 {
		t.Fatalf("exit %d, want 130; screen:\n%s", code, r.Screen())
	}
	if r.stdout.Len() != 0 {
		t.Errorf("stdout = %q", r.stdout.String())
	}
}

func TestTTYExecSIGTERMExits143(t *testing.T) {
	r := startTTY(t, false, "exec", "--prompt", "tty", "agent.yaml")
	r.mustExpect("prod")
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := r.wait()
	t.Logf("screen:\n%s", r.Screen())
	if code != 143 {
		t.Fatalf("exit %d, want 143; screen:\n%s", code, r.Screen())
	}
}

func TestTTYExecStdinPipedUsesDevTTY(t *testing.T) {
	r := startTTY(t, true, "exec", "--prompt", "tty", "agent.yaml")
	r.mustExpectSettled("(Esc to dismiss)")
	r.Send(ptytest.KeyDown, ptytest.KeyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if got := r.stdout.String(); got != "deploying to staging\n" {
		t.Errorf("stdout = %q", got)
	}
}

func TestTTYExecPromptTimeoutStops(t *testing.T) {
	start := time.Now()
	r := startTTY(t, false, "exec", "--prompt", "tty", "--prompt-timeout", "1s", "agent.yaml")
	r.mustExpect("prod")
	code := r.wait()
	t.Logf("screen:\n%s", r.Screen())
	if code != 4 {
		t.Fatalf("exit %d, want 4; screen:\n%s", code, r.Screen())
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("took %v", d)
	}
	if !strings.Contains(r.Screen(), "(no answer)") {
		t.Errorf("screen:\n%s", r.Screen())
	}
}

func TestTTYAskConfirm(t *testing.T) {
	r := startTTY(t, false, "ask", "Deploy to production?", "--confirm")
	// A consent question takes no key for its first moments.
	if !r.ExpectSettled("(y/N)") {
		t.FailNow()
	}
	r.Send("y", ptytest.KeyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if got := r.stdout.String(); got != "" {
		t.Errorf("stdout = %q, want nothing: the exit code is the answer", got)
	}
}

func TestTTYAskEscDismissesExit3(t *testing.T) {
	r := startTTY(t, true, "ask", "Deploy to production?", "--confirm", "--prompt", "tty")
	// A lone Esc must reach the prompt once it reads keys, not the
	// terminal's line buffer while survey is still drawing.
	if !r.ExpectSettled("(y/N)") {
		t.FailNow()
	}
	r.Send(ptytest.KeyEsc)
	if code := r.wait(); code != 3 {
		t.Fatalf("exit %d, want 3; screen:\n%s", code, r.Screen())
	}
}

func TestTTYAskNumber(t *testing.T) {
	r := startTTY(t, false, "ask", "How many replicas?", "--schema", `{"type":"integer","minimum":1}`)
	r.mustExpectSettled("(Esc to dismiss)")
	r.Send("0", ptytest.KeyEnter)
	r.mustExpectSettled("invalid")
	r.Send("3", ptytest.KeyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if got := r.stdout.String(); got != "3\n" {
		t.Errorf("stdout = %q; screen:\n%s", got, r.Screen())
	}
}

// Under CI with a terminal on stdin (a CI system that allocates a
// pseudo-terminal), --prompt auto means none: nobody will type JSON there,
// so the run stops for input at once instead of waiting forever.
func TestTTYAutoUnderCIMeansNone(t *testing.T) {
	r := startTTYAgentEnv(t, ttyAgent, ptytest.New(t), false, []string{"CI=true"}, "exec", "agent.yaml")
	if code := r.wait(); code != 4 {
		t.Fatalf("exit %d, want 4; screen:\n%s", code, r.Screen())
	}
	if !strings.Contains(r.Screen(), "no front end") {
		t.Errorf("the screen does not say why nothing was asked:\n%s", r.Screen())
	}
	// It says CI caused it, not a flag the person never passed.
	screen := strings.Join(strings.Fields(r.Screen()), " ")
	if !strings.Contains(screen, "the CI variable is set") || strings.Contains(screen, "(--prompt none)") {
		t.Errorf("the screen does not say CI caused it:\n%s", r.Screen())
	}
}

// A command running on a terminal shows a spinner with the time elapsed.
func TestTTYRunningCommandShowsElapsedTime(t *testing.T) {
	const agent = `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: shell, arguments: {cmd: "sleep 2; echo slept"}}]
      - text: done
agents:
  root:
    model: m
    toolsets: [{type: shell}]
`
	r := startTTYAgent(t, agent, ptytest.New(t), false, "exec", "--yolo", "agent.yaml")
	r.mustExpect("running shell (1s)")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if strings.Contains(r.Screen(), "running shell") {
		t.Errorf("the spinner was left on the screen:\n%s", r.Screen())
	}
}

// The flagship deploy example's confirmation is consent: on a terminal it
// starts on "No, abort", so a stray Enter aborts and nothing is deployed.
func TestTTYDeployConfirmationPreselectsNo(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "agents", "deploy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := startTTYAgent(t, string(data), ptytest.New(t), false, "exec", "agent.yaml")
	if !r.ExpectSettled("production") {
		t.FailNow()
	}
	r.Send(ptytest.KeyEnter) // staging, the first option
	if !r.ExpectSettled("No, abort") {
		t.FailNow()
	}
	r.Send(ptytest.KeyEnter)
	if code := r.wait(); code != 3 {
		t.Fatalf("exit %d, want 3 (aborted); screen:\n%s", code, r.Screen())
	}
	if strings.Contains(r.stdout.String(), "deploying") {
		t.Errorf("deployed on a stray Enter: %s", r.stdout.String())
	}
}

// The spinner counts from when the command starts, not from when its
// approval was drawn: the time a question waited for a person is not the
// command's.
func TestTTYElapsedTimeStartsAfterTheApproval(t *testing.T) {
	const agent = `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: shell, arguments: {cmd: "sleep 2; echo slept"}}]
      - text: done
agents:
  root:
    model: m
    toolsets: [{type: shell}]
`
	r := startTTYAgent(t, agent, ptytest.New(t), false, "exec", "agent.yaml")
	r.mustExpectSettled("Yes, once")
	const reading = 4 * time.Second // the person reads the question
	time.Sleep(reading)
	r.Send(ptytest.KeyUp, ptytest.KeyUp, ptytest.KeyEnter)
	r.mustExpect("running shell (")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	// The first count shown comes half a second after the command starts; a
	// loaded machine may show it late or run the command long, but a count
	// that began at the question would start at the reading time or above.
	m := regexp.MustCompile(`running shell \((\d+)s\)`).FindStringSubmatch(r.Raw())
	if m == nil {
		t.Fatalf("no count shown; screen:\n%s", r.Screen())
	}
	if first, _ := strconv.Atoi(m[1]); time.Duration(first)*time.Second >= reading {
		t.Errorf("the spinner's first count is %ss: it counted the %v the approval was on screen", m[1], reading)
	}
}

// stderr redirected (hitl exec agent.yaml 2>log) with a person at the
// terminal: the question is still asked on the terminal (/dev/tty), never
// left waiting for JSON on a blank screen.
func TestTTYStderrRedirectedStillAsksOnTheTerminal(t *testing.T) {
	hitl, err := exec.LookPath("hitl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(ttyAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := ptytest.New(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(hitl, "exec", "agent.yaml")
	cmd.Dir = dir
	cmd.Env = append(filteredEnv(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tm.Tty(), &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tm.Tty().Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	if !tm.ExpectSettled("(Esc to dismiss)") {
		t.FailNow()
	}
	tm.Send(ptytest.KeyDown, ptytest.KeyEnter)
	_ = tm.ReadToEnd()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("hitl: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("hitl did not exit; screen:\n%s", tm.Screen())
	}
	if got := stdout.String(); got != "deploying to staging\n" {
		t.Errorf("stdout = %q", got)
	}
}
