//go:build linux

package cmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/internal/ptytest"
)

// A write_file diff taller than the terminal (DESIGN §4, §11): the tool's
// approval text is raw, and the terminal front end escapes it once (a
// backslash is drawn as itself, an escape sequence shows as \x1b in reverse
// video) and
// shortens it, keeping its first and its last lines on the screen.
const viewLabel = "View the whole text"

func TestTTYTallWriteDiff(t *testing.T) {
	var content strings.Builder
	content.WriteString(`C:\\temp\\evil \e]0;pwned\a first line\n`)
	for i := range 300 {
		fmt.Fprintf(&content, "harmless line %d\\n", i)
	}
	content.WriteString("rm -rf ~ the decisive last line\\n")
	agent := `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: write_file, arguments: {path: run.sh, content: "` + content.String() + `"}}]
      - text: "{{.Last}}"
agents:
  root:
    model: m
    toolsets:
      - type: filesystem
`
	r := startTTYAgent(t, agent, ptytest.NewSize(t, 100, 30), false, "exec", "--prompt", "tty", "agent.yaml")
	// Too tall to read whole: only viewing it or No are offered.
	if !r.ExpectSettled(viewLabel) {
		t.FailNow()
	}
	screen := r.Screen()
	if strings.Contains(screen, "Yes, once") {
		t.Errorf("approving options offered before the text was viewed:\n%s", screen)
	}
	for _, want := range []string{`+C:\temp\evil \x1b]0;pwned\x07 first line`, "write_file run.sh: new file", "lines left out", "+rm -rf ~ the decisive last line", "No"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	// termtext shows a backslash as itself and ESC as \x1b: once, never
	// doubled.
	_, question, _ := strings.Cut(screen, "Allow this call of write_file?")
	if strings.Contains(question, `\\`) || strings.Contains(question, `\\x1b`) {
		t.Errorf("the diff was escaped twice:\n%s", question)
	}
	r.Send(ptytest.KeyEnter) // No is preselected
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if !strings.Contains(r.stdout.String(), "did not approve") {
		t.Errorf("stdout = %q, want the write refused", r.stdout.String())
	}
}
