//go:build !windows

package tty_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/tty"
)

// cursorQuery is survey's question to the terminal: where is the cursor?
const cursorQuery = "\x1b[6n"

// A text prompt asks the terminal where the cursor is twice (survey's
// Cursor.Size, then Cursor.Location) before it reads keys. A terminal's
// answer and keys the person typed come on the same stream, and a busy
// machine reads them together: keys that share a read with the answer,
// after it, before it, or with an R among them, reach the prompt all the
// same. Here the terminal is played byte for byte: each answer and the keys
// around it are one write.
func TestKeysSharingAReadWithTheCursorReplyReachThePrompt(t *testing.T) {
	const (
		size  = "\x1b[40;100R" // Cursor.Size: the bottom right corner
		where = "\x1b[2;15R"   // Cursor.Location: after the message
	)
	text := prompt.Question{Kind: prompt.KindText, Message: "What is it called?"}
	own := prompt.Question{
		Kind: prompt.KindChoice, Message: "Which testing framework?", Custom: true,
		Options: []prompt.Option{{ID: "Jest", Label: "Jest"}, {ID: "Mocha", Label: "Mocha"}},
	}
	tests := []struct {
		name    string
		q       prompt.Question
		choose  string    // keys for the choice, sent once it is drawn
		replies [2]string // the terminal's two answers, with keys around them
		action  prompt.Action
		content string
		text    string
	}{
		{
			name: "keys right after the answer", q: text,
			replies: [2]string{size, where + "Jasmine\r"},
			action:  prompt.Accept, content: `"Jasmine"`,
		},
		{
			name: "keys around the answer", q: text,
			replies: [2]string{size, "Jas" + where + "mine\r"},
			action:  prompt.Accept, content: `"Jasmine"`,
		},
		{
			name: "an R typed before the answer", q: text,
			replies: [2]string{size, "Rome" + where + "\r"},
			action:  prompt.Accept, content: `"Rome"`,
		},
		{
			name: "keys after the first answer", q: text,
			replies: [2]string{size + "Jasmine\r", where},
			action:  prompt.Accept, content: `"Jasmine"`,
		},
		{
			name: "Esc right after the answer", q: text,
			replies: [2]string{size, where + "\x1b"},
			action:  prompt.Cancel,
		},
		{
			name: "Ctrl-D right after the answer", q: text,
			replies: [2]string{size, where + "\x04"},
			action:  prompt.Cancel,
		},
		{
			name: "own answer after choosing to type it", q: own,
			choose:  "\x1b[B\x1b[B\r",
			replies: [2]string{size, where + "Jasmine\r"},
			action:  prompt.Accept, text: "Jasmine",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ptm, pts, err := pty.Open()
			if err != nil {
				t.Fatalf("open a pseudo-terminal: %v", err)
			}
			defer ptm.Close()
			defer pts.Close()
			if err := pty.Setsize(ptm, &pty.Winsize{Cols: 100, Rows: 40}); err != nil {
				t.Fatal(err)
			}
			fe := tty.New(pts, pts)
			defer fe.Close()
			term := playTerminal(t, ptm, tt.choose, tt.replies)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			ans, err := fe.Ask(ctx, tt.q)
			if err != nil {
				t.Fatalf("Ask: %v\noutput: %q", err, term.output())
			}
			wantAnswer(t, ans, err, tt.action, tt.content, tt.text)
		})
	}
}

// A terminal that never answers where the cursor is leaves the text prompt
// waiting; when the question's time is up, Ask says so, whatever keys were
// typed meanwhile (survey, its cursor position unknown, must not be left to
// draw them).
func TestTerminalThatNeverAnswersTimesOut(t *testing.T) {
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	defer ptm.Close()
	defer pts.Close()
	fe := tty.New(pts, pts)
	defer fe.Close()
	timeUp := errors.New("the question's time is up")
	// The first query is answered, the second gets only keys: an R
	// among them makes survey give up looking for the answer in them.
	term := playTerminal(t, ptm, "", [2]string{"\x1b[40;100R", "Rome"})
	ctx, cancel := context.WithTimeoutCause(context.Background(), 500*time.Millisecond, timeUp)
	defer cancel()
	_, err = fe.Ask(ctx, prompt.Question{Kind: prompt.KindText, Message: "What is it called?"})
	if !errors.Is(err, timeUp) {
		t.Fatalf("Ask: %v, want the question's timeout\noutput: %q", err, term.output())
	}
}

// playedTerminal is the terminal's side of a pty as playTerminal plays it.
type playedTerminal struct {
	mu  sync.Mutex
	out strings.Builder
}

func (p *playedTerminal) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// playTerminal reads what the program draws on ptm; once the choice's
// options are drawn it sends choose, then it answers the first two cursor
// queries with replies (each one write) and later ones with a plain answer.
// It stops when ptm is closed.
func playTerminal(t *testing.T, ptm *os.File, choose string, replies [2]string) *playedTerminal {
	t.Helper()
	p := &playedTerminal{}
	go func() {
		buf := make([]byte, 4096)
		answered, base, chosen := 0, 0, choose == ""
		for {
			n, err := ptm.Read(buf)
			if err != nil {
				return
			}
			p.mu.Lock()
			p.out.Write(buf[:n])
			out := p.out.String()
			p.mu.Unlock()
			if !chosen {
				if !strings.Contains(out, "Type your own answer") {
					continue
				}
				chosen = true
				if _, err := ptm.WriteString(choose); err != nil {
					return
				}
				// Only the queries of the prompt drawn next count.
				answered = strings.Count(out, cursorQuery)
				base = answered
			}
			for asked := strings.Count(out, cursorQuery); answered < asked; {
				reply := "\x1b[2;15R"
				if i := answered - base; i < len(replies) {
					reply = replies[i]
				}
				if _, err := ptm.WriteString(reply); err != nil {
					return
				}
				answered++
			}
		}
	}()
	return p
}
