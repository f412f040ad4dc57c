//go:build unix

package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive lock on f, retrying until ctx ends or wait
// passes: another hitl using the same memory file holds it only for one
// read-modify-write.
func lockFile(ctx context.Context, f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lock %s: another process has held it for %s", f.Name(), wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lockOpenFlags open the lock file: never through a symlink, never
// blocking on a FIFO.
const lockOpenFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
