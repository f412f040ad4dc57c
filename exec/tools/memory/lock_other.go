//go:build !unix

package memory

import (
	"context"
	"os"
	"time"
)

// lockFile does not lock where flock is not available (Windows is not a
// target yet): two processes writing the same memory file at once may lose
// one's change there (never the file: writes are atomic renames).
func lockFile(context.Context, *os.File, time.Duration) error { return nil }

// lockOpenFlags: no symlink or FIFO flags here.
const lockOpenFlags = 0
