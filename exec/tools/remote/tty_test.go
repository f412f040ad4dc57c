//go:build !windows

package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	expect "github.com/Netflix/go-expect"
	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
	hexec "github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/tty"
)

// ttyCall calls tool name of e with its questions asked on a pseudo-terminal
// drawn by vt10x (which answers survey's cursor queries); for each entry of
// steps it waits for the text, then sends the keys. It returns the result
// and the final screen.
func ttyCall(t *testing.T, name, args string, asker *prompt.Asker, e *env, steps ...[]string) (hexec.Result, error, string) {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	term := vt10x.New(vt10x.WithWriter(pts), vt10x.WithSize(100, 40))
	c, err := expect.NewConsole(expect.WithStdin(ptm), expect.WithStdout(term), expect.WithCloser(ptm, pts),
		expect.WithDefaultTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := pty.Setsize(c.Tty(), &pty.Winsize{Cols: 100, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	asker.FrontEnd = tty.New(c.Tty(), c.Tty())
	finished, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for _, step := range steps {
			if _, err := c.ExpectString(step[0]); err != nil {
				t.Errorf("waiting for %q: %v", step[0], err)
				return
			}
			time.Sleep(50 * time.Millisecond) // let survey finish drawing
			for _, k := range step[1:] {
				_, _ = c.Send(k)
				time.Sleep(20 * time.Millisecond)
			}
		}
		// Keep reading: the screen answers survey's cursor queries.
		for {
			select {
			case <-finished:
				_, _ = c.Expect(expect.EOF, expect.PTSClosed, expect.WithTimeout(100*time.Millisecond))
				return
			default:
				_, _ = c.Expect(expect.EOF, expect.PTSClosed, expect.WithTimeout(20*time.Millisecond))
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, callErr := e.tools[name].Call(ctx, hexec.ToolCall{ID: "call_1", Name: name, Arguments: json.RawMessage(args)})
	close(finished)
	<-done
	return res, callErr, term.String()
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
		// A consent question starts on the first option, not the default.
		{"down and enter", []string{"\x1b[B", "\r"}, 1, `choice 1 "Yes once"`},
		{"enter", []string{"\r"}, 0, `choice 0 "Yes for session"`},
		{"esc dismisses: the default", []string{"\x1b"}, 2, `choice 2 "No": write to notes.txt declined`},
		{"ctrl-d dismisses: the default", []string{"\x04"}, 2, `choice 2 "No"`},
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
	_, err, _ := ttyCall(t, "write_file", `{"path":"a","content":""}`, asker, e, []string{"No", "\x03"})
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
		[]string{"deploy?", "\r"}, []string{"which region?", "\x1b[B", "\r"})
	if err != nil || res.Text != "first 0, second 1" {
		t.Errorf("result = %+v, %v\n%s", res, err, screen)
	}
}
