//go:build linux

package cmd_test

import (
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/internal/ptytest"
)

// hitl exec --json at a terminal: stdout carries the prompt.request, and
// stderr says once that an answer line is awaited, with what this question
// takes (not a bare cursor).
func TestTTYJSONSaysAnAnswerLineIsAwaited(t *testing.T) {
	agent := `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: user_prompt, arguments: {message: "Which environment?", schema: {type: string, enum: [staging, production]}}}]
      - tool_calls: [{name: user_prompt, arguments: {message: "Which region?"}}]
      - text: "{{.Last.content}}"
agents:
  root:
    model: m
    toolsets: [{type: user_prompt}]
`
	r := startTTYAgent(t, agent, ptytest.New(t), false, "exec", "--json", "agent.yaml")
	const hint = `hitl: type the answer to p1 as one line of JSON and press Enter (expected one of the option ids "staging", "production"; {"action":"decline"} declines)`
	if !r.Expect(hint) {
		t.Fatalf("no hint on the terminal; screen:\n%s", r.Screen())
	}
	r.Send(`"staging"` + ptytest.KeyEnter)
	r.Send(`"eu"` + ptytest.KeyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if n := strings.Count(r.Raw(), "hitl: type the answer"); n != 1 {
		t.Errorf("the hint was said %d times, want once:\n%s", n, r.Raw())
	}
	if !strings.Contains(r.stdout.String(), `"type":"run.finished"`) {
		t.Errorf("stdout = %q", r.stdout.String())
	}
}
