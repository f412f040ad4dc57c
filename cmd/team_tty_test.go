//go:build !windows

package cmd_test

import (
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/internal/ptytest"
)

const teamTTYAgent = `models:
  root-m:
    provider: script
    script:
      - tool_calls: [{name: transfer_task, arguments: {agent: reviewer, task: "Review 1.2.", expected_output: "verdict"}}]
      - text: "root got: {{.Last}}"
  reviewer-m:
    provider: script
    script:
      - tool_calls: [{name: user_prompt, arguments: {message: "Ship 1.2?", schema: {type: boolean}}}]
      - tool_calls: [{name: shell, arguments: {cmd: "echo checked 1.2"}}]
      - text: "reviewed: {{.Last}}"
agents:
  root:
    model: root-m
    sub_agents: [reviewer]
  reviewer:
    model: reviewer-m
    toolsets: [{type: user_prompt}, {type: shell}]
`

// A sub-agent's question and its shell approval are asked on the terminal
// like the root's, naming the agent that asks (DESIGN §13).
func TestTTYSubAgentAsksAndApproves(t *testing.T) {
	r := startTTYAgent(t, teamTTYAgent, ptytest.New(t), false, "exec", "--prompt", "tty", "agent.yaml")
	r.mustExpectSettled("(y/N)")
	if !strings.Contains(r.Screen(), "agent reviewer asks:") {
		t.Errorf("the question does not name its agent; screen:\n%s", r.Screen())
	}
	r.Send("y", ptytest.KeyEnter)
	r.mustExpectSettled("Run this command?")
	if !strings.Contains(r.Screen(), "agent reviewer asks:") {
		t.Errorf("the approval does not name its agent; screen:\n%s", r.Screen())
	}
	r.Send(ptytest.KeyUp, ptytest.KeyUp, ptytest.KeyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if got := r.stdout.String(); got != "root got: reviewed: checked 1.2\n" {
		t.Errorf("stdout = %q; screen:\n%s", got, r.Screen())
	}
}
