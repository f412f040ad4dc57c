//go:build unix

package filesystem

import (
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// oNoFollow makes an open fail on a symlink as the final component.
const oNoFollow = syscall.O_NOFOLLOW

// rmdir removes the empty directory rel of r in one system call
// (unlinkat AT_REMOVEDIR), so nothing swapped in after the check — a file,
// a symlink — is removed instead. The parent is opened through the root.
func rmdir(r *os.Root, rel string) error {
	parent, err := r.Open(filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer parent.Close()
	if err := unix.Unlinkat(int(parent.Fd()), filepath.Base(rel), unix.AT_REMOVEDIR); err != nil {
		return err
	}
	return nil
}
