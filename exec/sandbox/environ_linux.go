package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// environFD names the variable that tells a re-executed hitl which file
// holds its real environment.
const environFD = "HITL_ENVIRON_FD"

// maxEnviron bounds the environment read back (the kernel's own limit on
// arguments and environment together is far lower).
const maxEnviron = 64 << 20

// HideEnviron keeps hitl's secrets out of its environment block, which
// /proc/<pid>/environ shows (Landlock does not hide it from a child):
// when args name a command that starts children (exec, resume, mcp), hitl
// copies its environment into memory the block is not, then overwrites
// the block with zeros (blankEnviron), so the process goes on as it is,
// with no second start. Where that cannot be done and checked, it
// re-executes itself with the whole environment handed over in a memfd,
// and the re-executed process reads it back into memory only. Either way
// it marks the process non-dumpable. It returns in the process that goes
// on; on any failure it goes on with the environment as it was.
func HideEnviron(args []string) {
	// Files hitl inherited from its parent (a CI runner's pipes, a hook's
	// descriptors) are not passed on to its children: only stdin, stdout
	// and stderr are (Go opens its own files close-on-exec).
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if v, ok := os.LookupEnv(environFD); ok {
		os.Unsetenv(environFD)
		if restoreEnviron(v) {
			_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
			return
		}
		// Not hitl's own hand-over (set by someone else, or gone): the
		// environment is hidden as if it had not been there.
	}
	if !startsChildren(args) {
		return
	}
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if len(os.Environ()) == 0 || blankEnviron() == nil {
		return
	}
	reexecHidden(args)
}

// reexecHidden re-executes hitl with args and its whole environment in a
// sealed memfd, whose number alone is in the new process's environment
// (HideEnviron reads it back). It returns only if that cannot be done.
func reexecHidden(args []string) {
	self, err := os.Executable()
	if err != nil {
		return
	}
	fd, err := unix.MemfdCreate("hitl-environ", unix.MFD_ALLOW_SEALING)
	if err != nil {
		return
	}
	var buf bytes.Buffer
	for _, kv := range os.Environ() {
		buf.WriteString(kv)
		buf.WriteByte(0)
	}
	f := os.NewFile(uintptr(fd), "hitl-environ")
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return
	}
	_, _ = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL)
	// Exec keeps fd open (memfd_create without MFD_CLOEXEC); every other
	// file is close-on-exec.
	_ = syscall.Exec(self, args, []string{environFD + "=" + strconv.Itoa(fd)})
	f.Close() // exec failed: go on as we are
}

// startsChildren says whether args (os.Args) may run a command that starts
// child processes: any word is exec, resume or mcp, whatever flags come
// before it ("hitl --prompt jsonl exec ..." too) and wherever a "--" stands
// (it may be a flag's value: --working-dir --). A word that only looks like
// one (a message) costs a re-exec, never a leak.
func startsChildren(args []string) bool {
	for _, a := range args[1:] {
		switch a {
		case "exec", "resume", "mcp":
			return true
		}
	}
	return false
}

// restoreEnviron reads the environment from the memfd named by v, as
// reexecHidden sealed it, and makes it the process's (in memory only),
// then closes the file. false when v names no such memfd: nothing read.
func restoreEnviron(v string) bool {
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return false
	}
	const sealed = unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL
	if seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0); err != nil || seals&sealed != sealed {
		return false // not a sealed memfd (or no file at all)
	}
	f := os.NewFile(uintptr(fd), "hitl-environ")
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Size > maxEnviron {
		return false
	}
	data := make([]byte, st.Size)
	if _, err := f.ReadAt(data, 0); err != nil {
		return false
	}
	os.Clearenv()
	for _, kv := range bytes.Split(data, []byte{0}) {
		name, val, ok := bytes.Cut(kv, []byte{'='})
		if ok && len(name) > 0 {
			os.Setenv(string(name), string(val))
		}
	}
	return true
}
