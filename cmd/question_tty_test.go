//go:build linux

package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/internal/ptytest"
)

// On a terminal, a call of a tool that asks a person (user_prompt) is shown
// by the question drawn, the tool.call line only naming the tool: its JSON
// arguments are not dumped above the question. A question of such a call
// that the terminal never drew (the answers file answered it) is printed,
// with its answer, since nothing else shows it. --json keeps the arguments
// in the event.
func TestTTYQuestionToolShowsTheDrawnQuestionOnly(t *testing.T) {
	agent := `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: user_prompt, arguments: {message: "Which environment?", schema: {type: string, enum: [dev, staging, prod]}}}]
      - tool_calls: [{name: user_prompt, arguments: {message: "Which region?"}}]
      - text: "done {{.Last.content}}"
agents:
  root:
    model: m
    toolsets: [{type: user_prompt}]
`
	answers := filepath.Join(t.TempDir(), "answers.yaml")
	if err := os.WriteFile(answers, []byte("- match: region\n  content: eu-west\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startTTYAgent(t, agent, ptytest.New(t), false, "exec", "--answers", answers, "agent.yaml")
	r.mustExpectSettled("(Esc to dismiss)")
	r.Send(ptytest.KeyDown, ptytest.KeyEnter)
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
	}
	if got := r.stdout.String(); got != "done eu-west\n" {
		t.Errorf("stdout = %q", got)
	}
	screen := r.Screen()
	for _, want := range []string{
		"→ user_prompt\n? Which environment? staging\n",
		// Not drawn: answered by the file.
		"→ user_prompt\n? Which region? [p2, text]\n  answer p2 (answers): \"eu-west\"\n",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, `{"message"`) || strings.Contains(screen, "answer p1") {
		t.Errorf("the drawn question's arguments or answer are shown again:\n%s", screen)
	}
}
