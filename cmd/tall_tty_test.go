//go:build linux

package cmd_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/internal/ptytest"
)

// A 120-line command whose hidden middle holds `touch PWNED` (DESIGN §4
// "Tall or wide text to approve"): the approval first offers only "View
// the whole text" and No; the pager, drawn by hitl, shows every line,
// escaped; only then are the approving options offered.
func TestTTYTallCommandIsViewedBeforeApproval(t *testing.T) {
	var cmd strings.Builder
	for i := range 120 {
		if i == 60 {
			cmd.WriteString(`touch PWNED \e[8m;\n`)
			continue
		}
		fmt.Fprintf(&cmd, "echo line %d;\\n", i)
	}
	agent := `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: shell, arguments: {cmd: "` + cmd.String() + `"}}]
      - text: "{{.Last}}"
agents:
  root:
    model: m
    toolsets: [{type: shell}]
`
	r := startTTYAgent(t, agent, ptytest.NewSize(t, 100, 30), false, "exec", "--prompt", "tty", "agent.yaml")
	r.mustExpectSettled(viewLabel)
	if strings.Contains(r.Screen(), "Yes, once") || strings.Contains(r.Screen(), "touch PWNED") {
		t.Fatalf("before viewing:\n%s", r.Screen())
	}
	r.Send(ptytest.KeyUp, ptytest.KeyEnter) // View the whole text
	seen := false
	pageRE := regexp.MustCompile(`\(page (\d+) of (\d+)\)`)
	for page := 1; page <= 20; page++ {
		r.mustExpectSettled(fmt.Sprintf("(page %d of ", page))
		if strings.Contains(r.Screen(), `touch PWNED \x1b[8m;`) {
			seen = true
		}
		m := pageRE.FindAllStringSubmatch(r.Screen(), -1)
		last := m[len(m)-1]
		r.Send(ptytest.KeyEnter) // Next page, or on the last: Done
		if last[1] == last[2] {
			break
		}
	}
	if !seen {
		t.Errorf("the pager never showed the hidden middle line")
	}
	r.mustExpectSettled("Yes, once")
	r.Send(ptytest.KeyEnter) // No is preselected
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if !strings.Contains(r.stdout.String(), "not approve") {
		t.Errorf("stdout = %q, want the command refused", r.stdout.String())
	}
}
