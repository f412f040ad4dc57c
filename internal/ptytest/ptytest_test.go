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

// A drawing that goes on after the awaited text (a busy machine drawing a
// long prompt slowly) is on the screen once ExpectSettled returns: it waits
// until the output is quiet, not a fixed time.
func TestExpectSettledWaitsForTheDrawingToEnd(t *testing.T) {
	tm := ptytest.New(t)
	const lines = 20
	var screen string
	tm.Drive(func() {
		if tm.ExpectSettled("line 0") {
			screen = tm.Screen()
		}
	}, func() {
		for i := range lines {
			fmt.Fprintf(tm.Tty(), "line %d\r\n", i)
			time.Sleep(30 * time.Millisecond) // 600 ms in all
		}
	})
	if want := fmt.Sprintf("line %d", lines-1); !strings.Contains(screen, want) {
		t.Errorf("the screen after ExpectSettled lacks %q:\n%s", want, screen)
	}
}
