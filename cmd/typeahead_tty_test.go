//go:build linux

package cmd_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/internal/ptytest"
)

// typeAheadAgent runs an allowed command, asks which cluster to wipe, asks
// a consent confirmation at once, runs another command, then asks a later
// question.
const typeAheadAgent = `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: shell, arguments: {cmd: "sleep 1"}}]
      - tool_calls: [{name: user_prompt, arguments: {message: "Which cluster do I wipe?", schema: {type: string, enum: [prod, staging]}}}]
      - tool_calls: [{name: user_prompt, arguments: {message: "Really wipe it?", schema: {type: boolean}}}]
      - tool_calls: [{name: shell, arguments: {cmd: "sleep 1"}}]
      - tool_calls: [{name: user_prompt, arguments: {message: "Which region next?", schema: {type: string, enum: [eu, us]}}}]
      - text: "done"
agents:
  root:
    model: m
    toolsets:
      - type: shell
      - type: user_prompt
permissions:
  allow: ["shell:cmd=sleep*"]
`

// stillAsking fails the test unless hitl is still running, and then shows
// drawn (a part of the question only its drawing has) once keys typed ahead
// had time to act.
func (r *ttyRun) stillAsking(drawn, keys string) {
	r.t.Helper()
	time.Sleep(800 * time.Millisecond)
	select {
	case err := <-r.done:
		r.done <- err
		r.t.Fatalf("%s typed ahead ended the run; screen:\n%s", keys, r.Screen())
	default:
	}
	if !r.ExpectSettled(drawn) {
		r.t.FailNow()
	}
}

// Enter and y Enter typed while an allowed command runs, before the first
// question, right after answering one (before the second) and before a later
// question answer nothing: each question waits for a deliberate answer
// (DESIGN §4 "Type-ahead never answers").
func TestTTYTypeAheadNeverAnswers(t *testing.T) {
	r := startTTYAgent(t, typeAheadAgent, ptytest.New(t), false, "exec", "--prompt", "tty", "agent.yaml")
	// At once, maybe before hitl has the terminal: these may be echoed by
	// the terminal itself (nothing can take that back), so they are not
	// y, which the check at the end looks for; they must answer nothing.
	r.Send(ptytest.KeyEnter, "n", ptytest.KeyEnter)
	// While the command runs: hitl has the terminal, nothing is echoed.
	r.mustExpect("sleep 1")
	r.Send(ptytest.KeyEnter, "y", ptytest.KeyEnter, ptytest.KeyEnter)
	r.mustExpect("Which cluster do I wipe?")
	r.stillAsking("(Esc to dismiss)", "Enter and y Enter during a running command")
	r.Send(ptytest.KeyDown, ptytest.KeyEnter)

	// Typed right after that answer, before the second question is drawn
	// (a consent question: it holds keys for its first moments too).
	r.Send("y", ptytest.KeyEnter)
	r.mustExpect("Really wipe it?")
	r.stillAsking("(y/N)", "y Enter after the first answer")
	r.Send("y", ptytest.KeyEnter)

	// Before a later question, while the second command runs.
	r.mustExpect("→ shell")
	r.Send(ptytest.KeyEnter, "y", ptytest.KeyEnter)
	r.mustExpect("Which region next?")
	r.stillAsking("(Esc to dismiss)", "Enter and y Enter before a later question")
	r.Send(ptytest.KeyDown, ptytest.KeyEnter)

	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; stdout %q; screen:\n%s", code, r.stdout.String(), r.Screen())
	}
	screen := r.Screen()
	for _, want := range []string{"Which cluster do I wipe? staging", "Really wipe it? Yes", "Which region next? us"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	// Keys typed between questions were not echoed.
	if strings.Contains(screen, "^M") || strings.Contains(screen, "\ny\n") {
		t.Errorf("keys typed ahead were echoed:\n%s", screen)
	}
}

// A command taller than the terminal: its harmful first line stays on the
// screen, with the count of lines left out and its last lines; only viewing
// it whole or No is offered (Enter: No).
func TestTTYTallCommandShowsFirstLine(t *testing.T) {
	var heredoc strings.Builder
	heredoc.WriteString("rm -rf ./precious && cat > notes.txt <<'EOF'\\n")
	for i := range 80 {
		fmt.Fprintf(&heredoc, "harmless note %d\\n", i)
	}
	heredoc.WriteString("EOF")
	agent := `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: shell, arguments: {cmd: "` + heredoc.String() + `"}}]
      - text: "{{.Last}}"
agents:
  root:
    model: m
    toolsets:
      - type: shell
`
	r := startTTYAgent(t, agent, ptytest.NewSize(t, 100, 30), false, "exec", "--prompt", "tty", "agent.yaml")
	if !r.ExpectSettled("View the whole text") {
		t.FailNow()
	}
	screen := r.Screen()
	for _, want := range []string{"rm -rf ./precious", "lines left out", "harmless note 79", "No"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "Yes, once") {
		t.Errorf("approving options offered before the text was viewed:\n%s", screen)
	}
	r.Send(ptytest.KeyEnter) // No is preselected
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if !strings.Contains(r.stdout.String(), "not run") {
		t.Errorf("stdout = %q, want the command refused", r.stdout.String())
	}
}
