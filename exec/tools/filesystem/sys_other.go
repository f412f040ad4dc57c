//go:build !unix

package filesystem

import (
	"errors"
	"os"
)

const oNoFollow = 0

// rmdir removes the empty directory rel of r.
func rmdir(r *os.Root, rel string) error {
	st, err := r.Lstat(rel)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return errors.New("not a directory")
	}
	return r.Remove(rel)
}
