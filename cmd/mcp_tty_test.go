//go:build !windows

package cmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec/tools/mcp/mcptest"
	"github.com/hitl-dev/hitl/internal/ptytest"
)

// Esc on an MCP server's elicitation dismisses it: the server receives
// cancel, and the run goes on with what the tool returns.
func TestTTYMCPElicitationEscCancels(t *testing.T) {
	server := mcptest.Build(t)
	agent := fmt.Sprintf(`models:
  m:
    provider: script
    script:
      - tool_calls: [{name: choose_env, arguments: {}}]
      - text: "server got {{.Last.action}}"
agents:
  root:
    model: m
    toolsets:
      - type: mcp
        name: test
        command: %q
permissions:
  allow: ["mcp:test:choose_env"]
`, server)
	r := startTTYAgent(t, agent, ptytest.New(t), false, "exec", "--prompt", "tty", "agent.yaml")
	if !r.ExpectSettled("Esc to dismiss") {
		t.FailNow()
	}
	r.Send(ptytest.KeyEsc)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if got := r.stdout.String(); got != "server got cancel\n" {
		t.Errorf("stdout = %q; screen:\n%s", got, r.Screen())
	}
	if !strings.Contains(r.Screen(), "Which environment?") {
		t.Errorf("the question was not drawn; screen:\n%s", r.Screen())
	}
}
