//go:build !windows

package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	hexec "github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/internal/ptytest"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/tty"
)

// ttyCall calls tool name of e with its questions asked on a pseudo-terminal;
// for each entry of steps it waits for the text, then sends the keys. It
// returns the result and the final screen.
func ttyCall(t *testing.T, name, args string, asker *prompt.Asker, e *env, steps ...[]string) (res hexec.Result, err error, screen string) {
	t.Helper()
	tm := ptytest.New(t)
	asker.FrontEnd = tty.New(tm.Tty(), tm.Tty())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tm.Drive(func() {
		for _, step := range steps {
			if !tm.ExpectSettled(step[0]) {
				return
			}
			tm.Send(step[1:]...)
		}
	}, func() {
		res, err = e.tools[name].Call(ctx, hexec.ToolCall{ID: "call_1", Name: name, Arguments: json.RawMessage(args)})
	})
	return res, err, tm.Screen()
}

// A user_choice asked on a terminal: the picker shows the tool's prompt and
// labels; a pick sends its index, Esc sends the default.
func TestUserChoiceOnTTY(t *testing.T) {
	tests := []struct {
		name     string
		keys     []string
		selected int
		result   string
	}{
		// A user_choice starts on the tool's default (DESIGN §4).
		{"up and enter", []string{ptytest.KeyUp, ptytest.KeyEnter}, 1, `choice 1 "Yes once"`},
		{"enter: the default", []string{ptytest.KeyEnter}, 2, `choice 2 "No": write to notes.txt declined`},
		{"esc dismisses: the default", []string{ptytest.KeyEsc}, 2, `choice 2 "No": write to notes.txt declined`},
		{"ctrl-d dismisses: the default", []string{ptytest.KeyCtrlD}, 2, `choice 2 "No"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &prompt.Asker{Unanswered: prompt.UnansweredStop}
			e := setup(t, asker, nil, "write_file")
			res, err, screen := ttyCall(t, "write_file", `{"path":"notes.txt","content":"hello"}`, asker, e,
				append([]string{"No"}, tt.keys...))
			if err != nil || !strings.Contains(res.Text, tt.result) {
				t.Errorf("result = %+v, %v; want %q\n%s", res, err, tt.result, screen)
			}
			if !strings.Contains(screen, "Allow writing to the original directory?") {
				t.Errorf("the screen lacks the prompt:\n%s", screen)
			}
			if sels := e.server.Selections(); len(sels) != 1 || sels[0].Selected != tt.selected {
				t.Errorf("selections = %+v, want %d", sels, tt.selected)
			}
		})
	}
}

// Ctrl-C at the picker stops the run: nothing is sent.
func TestUserChoiceOnTTYInterrupted(t *testing.T) {
	asker := &prompt.Asker{Unanswered: prompt.UnansweredStop}
	e := setup(t, asker, nil, "write_file")
	_, err, _ := ttyCall(t, "write_file", `{"path":"a","content":""}`, asker, e, []string{"No", ptytest.KeyCtrlC})
	if !errors.Is(err, prompt.ErrInterrupted) {
		t.Errorf("err = %v, want %v", err, prompt.ErrInterrupted)
	}
	if sels := e.server.Selections(); len(sels) != 0 {
		t.Errorf("selections = %+v", sels)
	}
}

// Two user_choice messages in one call: two pickers.
func TestTwoUserChoicesOnTTY(t *testing.T) {
	asker := &prompt.Asker{Unanswered: prompt.UnansweredStop}
	e := setup(t, asker, nil, "ask_twice")
	res, err, screen := ttyCall(t, "ask_twice", `{}`, asker, e,
		[]string{"deploy?", ptytest.KeyUp, ptytest.KeyEnter}, []string{"which region?", ptytest.KeyDown, ptytest.KeyEnter})
	if err != nil || res.Text != "first 0, second 1" {
		t.Errorf("result = %+v, %v\n%s", res, err, screen)
	}
}
