//go:build !windows

package ptytest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/term"

	"github.com/hitl-dev/hitl/internal/ptytest"
)

// The reason the package exists: a program that asks where the cursor is
// gets an answer while Drive keeps the terminal reading.
func TestDriveAnswersCursorQueries(t *testing.T) {
	tm := ptytest.New(t)
	fd := int(tm.Tty().Fd())
	old, err := term.MakeRaw(fd) // the answer has no newline: read it raw
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = term.Restore(fd, old) }()

	var reply string
	tm.Drive(func() { tm.Expect("ready") }, func() {
		got := make(chan string, 1)
		go func() {
			var b strings.Builder
			buf := make([]byte, 1)
			for !strings.HasSuffix(b.String(), "R") {
				if _, err := tm.Tty().Read(buf); err != nil {
					break
				}
				b.Write(buf)
			}
			got <- b.String()
		}()
		fmt.Fprint(tm.Tty(), "ready\x1b[6n")
		select {
		case reply = <-got:
		case <-time.After(5 * time.Second):
			t.Error("no answer to the cursor position query")
		}
	})
	if reply != "\x1b[1;6R" {
		t.Errorf("cursor position reply %q, want %q", reply, "\x1b[1;6R")
	}
}

func TestScreenAndRaw(t *testing.T) {
	tm := ptytest.New(t)
	tm.Drive(func() { tm.ExpectSettled("two") }, func() {
		fmt.Fprint(tm.Tty(), "one   \r\n\x1b[1mtwo\x1b[0m")
	})
	if got, want := tm.Screen(), "one\ntwo"; got != want {
		t.Errorf("screen %q, want %q", got, want)
	}
	if !strings.Contains(tm.Raw(), "\x1b[1mtwo") {
		t.Errorf("raw output lacks the escape sequence: %q", tm.Raw())
	}
}
