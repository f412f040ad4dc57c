//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package tty

import (
	"sync"

	"golang.org/x/sys/unix"
)

// termMode is the terminal's modes as the front end found them, kept to
// put back when it ends.
type termMode struct {
	fd    int
	saved unix.Termios
}

// quiet puts the terminal at fd in the front end's mode between questions:
// no echo, keys handed over one by one (so the key reader takes and drops
// them at once instead of the terminal holding a line), signals kept (Ctrl-C
// still interrupts a running command). Pending input is flushed. It returns
// nil when fd is not a terminal.
func quiet(fd int) *termMode {
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil
	}
	m := &termMode{fd: fd, saved: *t}
	q := *t
	q.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON
	q.Lflag |= unix.ISIG
	q.Cc[unix.VMIN], q.Cc[unix.VTIME] = 1, 0
	if unix.IoctlSetTermios(fd, ioctlSetTermiosFlush, &q) != nil {
		return nil
	}
	register(m)
	return m
}

// flushInput drops what the terminal holds as typed but not read.
func flushInput(fd int) {
	if t, err := unix.IoctlGetTermios(fd, ioctlGetTermios); err == nil {
		_ = unix.IoctlSetTermios(fd, ioctlSetTermiosFlush, t)
	}
}

// restore puts the modes back as they were found.
func (m *termMode) restore() {
	if m == nil {
		return
	}
	_ = unix.IoctlSetTermios(m.fd, ioctlSetTermios, &m.saved)
	unregister(m)
}

var live struct {
	mu    sync.Mutex
	modes map[*termMode]bool
}

func register(m *termMode) {
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.modes == nil {
		live.modes = map[*termMode]bool{}
	}
	live.modes[m] = true
}

func unregister(m *termMode) {
	live.mu.Lock()
	defer live.mu.Unlock()
	delete(live.modes, m)
}

// RestoreTerminals puts back the modes of every terminal a front end that
// was not closed changed. It is for a process about to exit without
// unwinding (os.Exit on a second Ctrl-C).
func RestoreTerminals() {
	live.mu.Lock()
	modes := make([]*termMode, 0, len(live.modes))
	for m := range live.modes {
		modes = append(modes, m)
	}
	live.mu.Unlock()
	for _, m := range modes {
		m.restore()
	}
}
