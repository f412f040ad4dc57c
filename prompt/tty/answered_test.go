//go:build !windows

package tty_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/internal/ptytest"
	"github.com/hitl-dev/hitl/prompt"
)

// Once a question is answered, or ends unanswered, the screen holds its
// summary line only: no refusal of an earlier reply ("Sorry, your reply was
// invalid") and no tag meant for while it is asked ("(Esc to dismiss)").
func TestAnsweredQuestionLeavesOnlyItsSummary(t *testing.T) {
	number := func(msg string) prompt.Question {
		q, err := prompt.FromSchema(json.RawMessage(`{"type":"integer","minimum":1,"maximum":10}`))
		if err != nil {
			t.Fatal(err)
		}
		q.Message = msg
		return q
	}
	long := strings.Repeat("word ", 30) // a refusal wider than the terminal wraps
	for _, tc := range []struct {
		name    string
		q       prompt.Question
		keys    [][]string // replies, the last one accepted (or Esc)
		summary string     // on the screen afterwards
		hidden  []string   // never on the screen afterwards
	}{
		{
			name:    "number refused twice",
			q:       number("How many replicas?"),
			keys:    [][]string{{"many"}, {"\x7f\x7f\x7f\x7f", "42"}, {"\x7f\x7f", "3"}},
			summary: "How many replicas? 3",
		},
		{
			name:    "a wrapped refusal",
			q:       prompt.Question{Kind: prompt.KindText, Message: "Name?", Schema: json.RawMessage(`{"type":"string","enum":["ok"]}`)},
			keys:    [][]string{{long}, {strings.Repeat("\x7f", len(long)), "ok"}},
			summary: "Name? ok",
		},
		{
			name:    "refused, then dismissed",
			q:       number("How many?"),
			keys:    [][]string{{"many"}, {ptytest.KeyEsc}},
			summary: "How many? (dismissed)",
		},
		{
			name:    "yes/no refused once",
			q:       prompt.Question{Kind: prompt.KindConfirm, Message: "Sure?"},
			keys:    [][]string{{"maybe"}, {"\x7f\x7f\x7f\x7f\x7f", "y"}},
			summary: "Sure? Yes",
		},
		{
			name:    "yes/no refused, then dismissed",
			q:       prompt.Question{Kind: prompt.KindConfirm, Message: "Sure?"},
			keys:    [][]string{{"maybe"}, {ptytest.KeyEsc}},
			summary: "Sure? (dismissed)",
		},
		{
			name:    "secret",
			q:       prompt.Question{Kind: prompt.KindText, Secret: true, Message: "API token?"},
			keys:    [][]string{{"hunter2"}},
			summary: "API token? *******",
			hidden:  []string{"hunter"},
		},
		{
			name:    "secret refused once",
			q:       prompt.Question{Kind: prompt.KindText, Secret: true, Message: "PIN?", Schema: json.RawMessage(`{"type":"string","minLength":4}`)},
			keys:    [][]string{{"12"}, {"1234"}},
			summary: "PIN? ****",
			hidden:  []string{"1234"},
		},
		{
			name:    "secret dismissed",
			q:       prompt.Question{Kind: prompt.KindText, Secret: true, Message: "Token?"},
			keys:    [][]string{{ptytest.KeyEsc}},
			summary: "Token? (dismissed)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, tm := askOn(t, tc.q, func(tm *ptytest.Terminal) {
				tm.ExpectSettled("(Esc to dismiss)")
				for i, k := range tc.keys {
					if k[len(k)-1] != ptytest.KeyEsc {
						k = append(k, ptytest.KeyEnter)
					}
					tm.Send(k...)
					if i < len(tc.keys)-1 {
						tm.ExpectSettled("Sorry, your reply was invalid")
					}
				}
			})
			screen := tm.Screen()
			if !strings.Contains(screen, tc.summary) {
				t.Errorf("no summary %q on the screen:\n%s", tc.summary, screen)
			}
			for _, s := range append(tc.hidden, "Sorry, your reply was invalid", "(Esc to dismiss)", "word word") {
				if strings.Contains(screen, s) {
					t.Errorf("%q is still on the screen:\n%s", s, screen)
				}
			}
			if n := strings.Count("\n"+screen, "\n? "); n != 1 {
				t.Errorf("%d question marks on the screen, want the summary's only:\n%s", n, screen)
			}
		})
	}
}
