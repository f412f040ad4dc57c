//go:build unix && !linux

package procgroup

import "syscall"

// Alive reports whether process group pgid has a member (zombies included:
// there is no portable way to tell them apart).
func Alive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}
