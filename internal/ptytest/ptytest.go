//go:build !windows

// Package ptytest runs hitl's terminal front end, or hitl itself, on a
// pseudo-terminal in tests and plays the person at the keyboard.
//
// The pty's output goes through a vt10x screen, not only into a buffer:
// survey's Input, Confirm and Password prompts ask the terminal where the
// cursor is (ESC[6n) and wait for the answer, which a bare pty never gives.
// The vt10x screen answers as a real terminal does (as survey's own tests
// do), and shows what the person would see.
//
// The screen only moves while the console is being read, so whoever drives
// the keys must keep reading until the code under test is done: Drive does.
package ptytest

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	expect "github.com/Netflix/go-expect"
	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
	"golang.org/x/term"
)

// Keys as a terminal sends them.
const (
	KeyUp    = "\x1b[A"
	KeyDown  = "\x1b[B"
	KeyEnter = "\r"
	KeySpace = " "
	KeyEsc   = "\x1b"
	KeyCtrlC = "\x03"
	KeyCtrlD = "\x04"
)

// The screen's size, also set on the pty: survey reads it to count wrapped
// lines, so the two must agree.
const (
	Cols = 100
	Rows = 40
)

const (
	// expectTimeout bounds every wait for output.
	expectTimeout = 10 * time.Second
	// keyGap separates key presses, so the program reads them one by one
	// as it would from a person.
	keyGap = 20 * time.Millisecond
	// drawTime lets the program finish a drawing that has begun.
	drawTime = 50 * time.Millisecond
	// ConsentHold is how long a consent question takes no key once drawn
	// (prompt/tty's hold, DESIGN §4); ExpectSettled waits it out.
	ConsentHold = 300 * time.Millisecond
	// readSlice is how long one read waits while Drive keeps the screen
	// answering; lastRead takes in the final drawing.
	readSlice = 20 * time.Millisecond
	lastRead  = 100 * time.Millisecond
	// quietTime without output tells ExpectSettled the drawing is done;
	// settleMax bounds how long it waits for that beyond the hold.
	quietTime = 50 * time.Millisecond
	settleMax = 2 * time.Second
)

// Terminal is a pseudo-terminal whose output is drawn on a vt10x screen and
// kept raw. It is closed when the test ends.
type Terminal struct {
	t       testing.TB
	console *expect.Console
	screen  vt10x.Terminal
	raw     *lockedBuffer
}

// New opens a Terminal of Cols by Rows.
func New(t testing.TB) *Terminal {
	t.Helper()
	return NewSize(t, Cols, Rows)
}

// NewSize opens a Terminal of cols by rows (a short terminal, to show how
// tall text is cut).
func NewSize(t testing.TB, cols, rows int) *Terminal {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	screen := vt10x.New(vt10x.WithWriter(pts), vt10x.WithSize(cols, rows))
	raw := &lockedBuffer{}
	c, err := expect.NewConsole(
		expect.WithStdin(ptm),
		expect.WithStdout(screen, raw),
		expect.WithCloser(ptm, pts),
		expect.WithDefaultTimeout(expectTimeout),
	)
	if err != nil {
		ptm.Close()
		pts.Close()
		t.Fatalf("open a console: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := pty.Setsize(c.Tty(), &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		t.Fatalf("size the pseudo-terminal: %v", err)
	}
	return &Terminal{t: t, console: c, screen: screen, raw: raw}
}

// Tty is the program's side of the terminal.
func (tm *Terminal) Tty() *os.File { return tm.console.Tty() }

// Expect waits for s in the output. If s does not come in time it reports
// an error with the output so far and returns false. It may be called from
// any goroutine.
func (tm *Terminal) Expect(s string) bool {
	tm.t.Helper()
	if out, err := tm.console.ExpectString(s); err != nil {
		tm.t.Errorf("waiting for %q: %v; output so far:\n%q", s, err, out)
		return false
	}
	return true
}

// ExpectSettled waits for s, as Expect does, then lets the program finish
// the drawing s is part of and waits out a consent question's hold, so that
// Screen shows all of it and keys sent next reach the prompt s belongs to.
// It reads the terminal all the while, so the program's cursor queries are
// answered as it makes them, and goes on until the output has been quiet
// for a moment (on a busy machine the drawing takes longer), for at most
// settleMax more.
func (tm *Terminal) ExpectSettled(s string) bool {
	tm.t.Helper()
	if !tm.Expect(s) {
		return false
	}
	tm.read(drawTime + ConsentHold)
	for deadline := time.Now().Add(settleMax); time.Now().Before(deadline); {
		before := tm.raw.Len()
		tm.read(quietTime)
		if tm.raw.Len() == before {
			break
		}
	}
	return true
}

// Send presses keys one after another, a little apart, as a person does.
// A failure is reported as an error.
func (tm *Terminal) Send(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		if _, err := tm.console.Send(k); err != nil {
			tm.t.Errorf("send %q: %v", k, err)
		}
		time.Sleep(keyGap)
	}
}

// ReadToEnd reads the output until no one holds the program's side of the
// terminal open any more (or the wait times out).
func (tm *Terminal) ReadToEnd() error {
	_, err := tm.console.ExpectEOF()
	return err
}

// Drive runs person (who waits for output and sends keys) while call runs
// on this goroutine, and returns when both are done. After person's last
// key it keeps reading the terminal until call returns, so the screen
// answers the cursor queries the program still makes, then takes in the
// last drawing.
func (tm *Terminal) Drive(person, call func()) {
	finished, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		person()
		for {
			select {
			case <-finished:
				tm.read(lastRead)
				return
			default:
				tm.read(readSlice)
			}
		}
	}()
	call()
	close(finished)
	<-done
}

// read takes in output for d, answering cursor queries on the way. A
// front end's key reader keeps the pty open, so this seldom sees the end.
func (tm *Terminal) read(d time.Duration) {
	_, _ = tm.console.Expect(expect.EOF, expect.PTSClosed, expect.WithTimeout(d))
}

// Screen is what the terminal shows, without trailing blanks.
func (tm *Terminal) Screen() string {
	lines := strings.Split(tm.screen.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// Raw is every byte the program wrote, escape sequences and all.
func (tm *Terminal) Raw() string { return tm.raw.String() }

// Modes reads the terminal's modes (raw or cooked, echo…) through a
// descriptor of its own, which works after Tty is closed too; compare two
// with reflect.DeepEqual.
func (tm *Terminal) Modes() *term.State {
	tm.t.Helper()
	f, err := os.OpenFile(tm.Tty().Name(), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tm.t.Fatalf("open the terminal to read its modes: %v", err)
	}
	defer f.Close()
	st, err := term.GetState(int(f.Fd()))
	if err != nil {
		tm.t.Fatalf("read the terminal's modes: %v", err)
	}
	return st
}

// lockedBuffer collects the raw output; the console writes it while tests
// read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
