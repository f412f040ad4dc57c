package sandbox

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// seenCaps are the capabilities a child a person saw keeps when hitl runs
// as root: the ones that make up the write access the user has (file
// ownership and permissions), and changing to another user. A command
// nobody saw keeps none. No child keeps what would reach past the sandbox:
// mounting (CAP_SYS_ADMIN: undo the tmpfs over the state dir), making
// device nodes (CAP_MKNOD: the person's terminal, the disk), ptrace,
// signals to other users, raw I/O, and CAP_DAC_READ_SEARCH, whose
// open_by_handle_at opens a directory by its inode beneath whatever is
// mounted on it (the state dir under its empty tmpfs); CAP_DAC_OVERRIDE
// reads and searches all the same.
var seenCaps = []int{
	unix.CAP_CHOWN, unix.CAP_DAC_OVERRIDE, unix.CAP_FOWNER,
	unix.CAP_FSETID, unix.CAP_SETGID, unix.CAP_SETUID, unix.CAP_NET_BIND_SERVICE,
}

// capNames are caps (seenCaps, and what the per-run init holds) as bwrap
// names them.
func capNames(caps []int) []string {
	names := map[int]string{
		unix.CAP_CHOWN: "CAP_CHOWN", unix.CAP_DAC_OVERRIDE: "CAP_DAC_OVERRIDE",
		unix.CAP_FOWNER: "CAP_FOWNER",
		unix.CAP_FSETID: "CAP_FSETID", unix.CAP_SETGID: "CAP_SETGID", unix.CAP_SETUID: "CAP_SETUID",
		unix.CAP_NET_BIND_SERVICE: "CAP_NET_BIND_SERVICE",
		unix.CAP_SYS_ADMIN:        "CAP_SYS_ADMIN", unix.CAP_SETPCAP: "CAP_SETPCAP",
		unix.CAP_KILL: "CAP_KILL",
	}
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = names[c]
	}
	return out
}

// dropBounding removes every capability but keep from this thread's
// bounding set, so what it executes (as root, which would get the bounding
// set) has at most keep. It must run on the thread that executes. Without
// root there is nothing to drop.
func dropBounding(keep []int) error {
	if os.Geteuid() != 0 {
		return nil
	}
	for c := 0; c <= lastCap(); c++ {
		if slices.Contains(keep, c) {
			continue
		}
		// EINVAL: a capability this kernel does not have.
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	return unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
}

// lastCap is the kernel's last capability, which may be past the one this
// build knows: a bounding set is emptied up to it.
var lastCap = sync.OnceValue(func() int {
	last := unix.CAP_LAST_CAP
	if data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && n > last {
			last = n
		}
	}
	return last
})
