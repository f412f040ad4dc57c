//go:build unix

package session

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lock claims the session file for this process (released when the file is
// closed or the process dies), so a second hitl cannot resume it at once.
func lock(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%s: %w", f.Name(), ErrInUse)
		}
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return nil
}
