package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

// hiddenIDs say what is at each path now, without following a link: its
// device, inode, type and change time, or "-" where there is nothing (or
// nothing that can be looked at). The change time tells a file removed and
// made again, which may get the inode number it had (ext4 hands a freed
// one back), from the one that was there: no one can set it back.
func hiddenIDs(paths []string) []string {
	ids := make([]string, len(paths))
	for i, p := range paths {
		ids[i] = "-"
		if fi, err := os.Lstat(p); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				ids[i] = fmt.Sprintf("%d:%d:%o:%d.%d", st.Dev, st.Ino, st.Mode&syscall.S_IFMT, st.Ctim.Sec, st.Ctim.Nsec)
			}
		}
	}
	return ids
}
