//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package tty

// termMode is a no-op where the terminal's modes are not reachable through
// termios: keys typed between questions are echoed there.
type termMode struct{}

func quiet(int) *termMode    { return nil }
func flushInput(int)         {}
func (m *termMode) restore() {}

// RestoreTerminals is a no-op here.
func RestoreTerminals() {}
