package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A holder that starts its worker's commands (amd64: holderSpawns). The
// worker's thread, once confined, makes the holder and ends; from then on
// each command is the holder's child: the init writes what it is into the
// holder's spawnBlock (memory they share) and sends the byte 'J' with the
// command's stdin, stdout, stderr and the ruleset of its Landlock domain;
// the holder's child (a vfork, on a stack of its own) enters that domain,
// drops what the holder alone keeps (CAP_KILL), and executes. The holder
// answers 'S' with the command's pidfd (or 'F', blk.errno saying why it
// could not execute), then 'E' when the command ends and 'D' once it
// killed and waited for all the command left, its wait status in blk. No
// thread of the init waits for the command, forks or is handed a job:
// the init only reads and writes two sockets, through Go's poller.

// spawnMapping is the size of a spawning holder's mapping: its spawnBlock
// (the first page), its own stack (the second), the child's (the rest).
const spawnMapping = 4 * holderStack

// spawnBlock is what a spawning holder and its child read and write, in
// memory the init shares with them. Its layout is the assembly's
// (go_asm.h).
type spawnBlock struct {
	// The command, for the child: C strings and NULL-ended arrays the
	// init keeps alive until the child executes; dir 0 for none.
	path, argv, envp, dir uintptr
	cstack                uintptr // the top of the child's stack
	nofile                unix.Rlimit
	setNofile             int32 // the child sets RLIMIT_NOFILE to nofile
	setCaps               int32 // the child sets its capabilities to capData
	capHdr                unix.CapUserHeader
	capData               [2]unix.CapUserData
	// The holder's recvmsg of a job, and its sendmsg of 'S'.
	rmsg  unix.Msghdr
	riov  unix.Iovec
	rbyte [8]byte
	rctl  [32]byte // CMSG_SPACE of four descriptors
	smsg  unix.Msghdr
	siov  unix.Iovec
	sbyte [8]byte
	sctl  [24]byte // CMSG_SPACE of one
	// Written by the holder and its child.
	errno  int64 // why the child did not execute (0: it did)
	pidfd  int32 // the command's, in the holder
	seen   int32 // 1 once status is the command's wait status
	status int32
}

// wire points the block's message headers at its own buffers.
func (b *spawnBlock) wire() {
	b.riov = unix.Iovec{Base: &b.rbyte[0], Len: 1}
	b.rmsg = unix.Msghdr{Iov: &b.riov, Iovlen: 1, Control: &b.rctl[0]}
	b.sbyte[0] = 'S'
	b.siov = unix.Iovec{Base: &b.sbyte[0], Len: 1}
	b.smsg = unix.Msghdr{Iov: &b.siov, Iovlen: 1, Control: &b.sctl[0], Controllen: uint64(len(b.sctl))}
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b.sctl[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SCM_RIGHTS
	h.SetLen(unix.CmsgLen(4))
}

// takeCaps has the block's child take this thread's capabilities (the
// command's: prepare has dropped what the holder alone keeps).
func (b *spawnBlock) takeCaps() error {
	b.capHdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	if err := unix.Capget(&b.capHdr, &b.capData[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	b.setCaps = 1
	return nil
}

// cCommand is a command's strings as the child executes them, kept alive
// (referenced here) until it has.
type cCommand struct {
	path, dir  *byte
	argv, envp []*byte
}

// set writes req into the block for the next job (and resets what the
// holder and the kernel write back). EINVAL for a string with a NUL, as
// an exec would say.
func (b *spawnBlock) set(req request) (*cCommand, error) {
	c := &cCommand{}
	var err error
	if c.path, err = unix.BytePtrFromString(req.Prog); err != nil {
		return nil, err
	}
	if req.Dir != "" {
		if c.dir, err = unix.BytePtrFromString(req.Dir); err != nil {
			return nil, err
		}
	}
	if c.argv, err = cStrings(req.Argv); err != nil {
		return nil, err
	}
	if c.envp, err = cStrings(req.Env); err != nil {
		return nil, err
	}
	b.path = uintptr(unsafe.Pointer(c.path))
	b.dir = uintptr(unsafe.Pointer(c.dir))
	b.argv = uintptr(unsafe.Pointer(&c.argv[0]))
	b.envp = uintptr(unsafe.Pointer(&c.envp[0]))
	b.rmsg.Controllen = uint64(len(b.rctl))
	b.rmsg.Flags = 0
	b.errno = 0
	b.pidfd = -1
	atomic.StoreInt32(&b.seen, 0)
	b.status = 0
	return c, nil
}

// cStrings is ss as a NULL-ended array of C strings.
func cStrings(ss []string) ([]*byte, error) {
	a := make([]*byte, len(ss)+1)
	for i, s := range ss {
		p, err := unix.BytePtrFromString(s)
		if err != nil {
			return nil, err
		}
		a[i] = p
	}
	return a, nil
}

// watchLifeline puts a spawning holder's lifeline through Go's poller.
func (h *holderProc) watchLifeline() error {
	if err := unix.SetNonblock(h.life, true); err != nil {
		return err
	}
	h.lf = os.NewFile(uintptr(h.life), "lifeline")
	rc, err := h.lf.SyscallConn()
	if err != nil {
		return err
	}
	h.lrc = rc
	return nil
}

// errHolderGone: the holder ended, or said what it may not.
var errHolderGone = errors.New("the PID namespace's first process ended")

// hear reads the holder's next words into buf (d > 0: within d), and the
// descriptor that came with them (-1 for none).
func (h *holderProc) hear(buf []byte, d time.Duration) (n, fd int, err error) {
	fd = -1
	if d > 0 {
		if err := h.lf.SetReadDeadline(time.Now().Add(d)); err != nil {
			return 0, fd, err
		}
		defer func() { _ = h.lf.SetReadDeadline(time.Time{}) }()
	}
	var oob [24]byte // CMSG_SPACE of one descriptor
	var oobn int
	var rerr error
	err = h.lrc.Read(func(s uintptr) bool {
		for {
			n, oobn, _, _, rerr = unix.Recvmsg(int(s), buf, oob[:], unix.MSG_CMSG_CLOEXEC)
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN
			}
		}
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, fd, err
	}
	if oobn > 0 {
		var fds []int
		msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
		for i := 0; perr == nil && i < len(msgs); i++ {
			got, rerr := unix.ParseUnixRights(&msgs[i])
			perr = rerr
			fds = append(fds, got...)
		}
		if perr != nil || len(fds) != 1 {
			for _, f := range fds {
				unix.Close(f)
			}
			return 0, -1, errHolderGone
		}
		fd = fds[0]
	}
	if n == 0 {
		if fd >= 0 {
			unix.Close(fd)
		}
		return 0, -1, io.EOF
	}
	return n, fd, nil
}

// started waits for the holder's word on the job it was sent: 'S' with
// the command's pidfd, or 'F'. The holder says it as soon as the command
// executes (or could not), however long that takes, unless it is stopped
// (from outside: no command can stop it): then it fails.
func (h *holderProc) started(word *[2]byte) (pidfd int, err error) {
	for {
		_, pidfd, err = h.hear(word[:1], holderGrace)
		if !errors.Is(err, os.ErrDeadlineExceeded) || stopped(h.pidfd) {
			return pidfd, err
		}
	}
}

// stopped says whether the process of pidfd is stopped (or traced); a
// process that cannot be seen is not.
func stopped(pidfd int) bool {
	f, ok := procStat(pidfd)
	return ok && (f[0] == "T" || f[0] == "t")
}

// ended waits for the holder's 'E' and 'D' into word: the command
// ended, and all it left is gone. No bound on the command; but once it
// has ended (its pidfd, looked at each second, says so, or 'E'), the
// holder has holderGrace to be done: a holder stopped from outside (no
// command can stop it) does not hold the command's end.
func (h *holderProc) ended(word *[2]byte, pidfd int) bool {
	got, over := 0, false
	for got < len(word) {
		d := time.Second
		if over {
			d = holderGrace
		}
		n, fd, err := h.hear(word[got:], d)
		if fd >= 0 {
			unix.Close(fd)
			return false
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && !over {
			over = pollEnds(pidfd, 0)
			continue
		}
		if err != nil {
			return false
		}
		got += n
		over = true
	}
	return *word == [2]byte{'E', 'D'}
}

// zombieStatus is the wait status of the process of pidfd, once it has
// ended and is not yet waited for: its exit_code in /proc.
func zombieStatus(pidfd int) (syscall.WaitStatus, bool) {
	f, ok := procStat(pidfd)
	if !ok || len(f) < 50 || f[0] != "Z" {
		return 0, false
	}
	code, err := strconv.Atoi(f[49])
	if err != nil {
		return 0, false
	}
	return syscall.WaitStatus(code), true
}

// procStat is the fields of /proc/PID/stat after the name (the first is
// the state; exit_code is the 50th) of the process of pidfd: its number
// in the PID namespace of this /proc (fdinfoPid).
func procStat(pidfd int) ([]string, bool) {
	if pidfd < 0 {
		return nil, false
	}
	pid, err := fdinfoPid(pidfd)
	if err != nil || pid <= 0 {
		return nil, false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	f, err := statFields(stat)
	return f, err == nil && len(f) > 0
}

// drive starts, one after another, the jobs handed to w, through its
// spawning holder.
func (in *sbInit) drive(w *worker, holder *holderProc) {
	for j := range w.jobs {
		if !in.runHeld(holder, j, w) {
			return
		}
	}
}

// runHeld is run for a spawning holder: the holder starts the command of
// j, waits for it and for all it left; the init says how it ended. True
// when the worker may start the next.
func (in *sbInit) runHeld(h *holderProc, j job, w *worker) (again bool) {
	req := j.req
	b := h.blk
	broken := func(why error) bool {
		// The holder went, or said what it may not: its namespace ends
		// with it, and so does the worker.
		h.end()
		h.reap(func(pidfd int) { _ = in.send(reply{ID: req.ID, HolderStuck: true}, []int{pidfd}) })
		return false
	}
	c, err := b.set(req)
	if err != nil {
		closeAll(j.files)
		return in.notStarted(w, h, req.ID, err)
	}
	defer runtime.KeepAlive(c) // until the child executed, or is gone
	fds := []int{int(j.files[0].Fd()), int(j.files[1].Fd()), int(j.files[2].Fd()), in.scope}
	err = unix.Sendmsg(h.life, []byte{'J'}, unix.UnixRights(fds...), nil, 0)
	var word [2]byte
	pidfd := -1
	if err == nil {
		pidfd, err = h.started(&word)
	}
	if err == nil && word[0] == 'F' && pidfd < 0 {
		closeAll(j.files)
		return in.notStarted(w, h, req.ID, syscall.Errno(b.errno))
	}
	if err == nil && (word[0] != 'S' || pidfd < 0) {
		err = errHolderGone
	}
	if err != nil {
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		broken(err)
		if j.tries == 0 {
			// Nothing started: a new worker starts it (once).
			j.tries++
			in.startWorker().jobs <- j
			return false
		}
		closeAll(j.files)
		in.finish(reply{ID: req.ID, Error: fmt.Sprintf("the command's holder: %v", err)})
		return false
	}
	closeAll(j.files)
	_ = in.send(reply{ID: req.ID, Started: true}, []int{pidfd})
	swept := h.ended(&word, pidfd)
	// Its status, read before the holder's memory may go (broken,
	// keepWorker): the holder kept it once it was had; else (a holder
	// that did not sweep) the kernel's word on the command, a zombie.
	status, seen := syscall.WaitStatus(0), atomic.LoadInt32(&b.seen) == 1
	if seen {
		status = syscall.WaitStatus(atomic.LoadInt32(&b.status))
	} else if status, seen = zombieStatus(pidfd); !seen && atomic.LoadInt32(&b.seen) == 1 {
		status, seen = syscall.WaitStatus(atomic.LoadInt32(&b.status)), true
	}
	unix.Close(pidfd)
	if !swept {
		broken(errHolderGone)
	} else {
		swept = in.keepWorker(w, h)
	}
	if !seen {
		// Lost with its namespace: its holder's end killed it.
		status = syscall.WaitStatus(syscall.SIGKILL)
	}
	in.finish(reply{ID: req.ID, Exited: true, Status: uint32(status)})
	return swept
}
