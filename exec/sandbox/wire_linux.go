package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The per-run sandbox's wire (DESIGN §15): hitl and the init inside the
// sandbox talk over a socketpair (SOCK_STREAM) that no command inherits.
// Each message is a 4-byte big-endian length and that many bytes: a
// request in a binary form of its own (encode), a reply as JSON; the
// descriptors a message carries (a command's stdin, stdout and stderr; a
// started command's pidfd) ride on the length's sendmsg.

// maxMessage bounds a message read (an environment and argv within the
// kernel's own limit on them, 2 MiB, with room to spare).
const maxMessage = 16 << 20

// maxFDs is the most descriptors a message carries.
const maxFDs = 3

// encoder is a message to send; decoder one to receive.
type (
	encoder interface{ encode() ([]byte, error) }
	decoder interface{ decode([]byte) error }
)

// request asks the init to start a command. Its strings go byte for byte
// (what runs must be what was checked, bytes that are not UTF-8 too):
// the id (8 bytes, big-endian), then prog, dir, argv and env, each string
// as its length (a uvarint) and its bytes, each list as its length and
// its strings. The encoding costs microseconds where JSON's base64 cost
// tens of them, on the way of every command.
type request struct {
	ID   uint64
	Prog string
	Argv []string
	Env  []string
	Dir  string
}

func (r request) encode() ([]byte, error) {
	size := 8 + 4*binary.MaxVarintLen64 + len(r.Prog) + len(r.Dir)
	for _, l := range [][]string{r.Argv, r.Env} {
		for _, s := range l {
			size += binary.MaxVarintLen64 + len(s)
		}
	}
	b := make([]byte, 8, size)
	binary.BigEndian.PutUint64(b, r.ID)
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(r.Prog)
	str(r.Dir)
	for _, l := range [][]string{r.Argv, r.Env} {
		b = binary.AppendUvarint(b, uint64(len(l)))
		for _, s := range l {
			str(s)
		}
	}
	return b, nil
}

func (r *request) decode(b []byte) error {
	bad := func(what string) error { return fmt.Errorf("sandbox: a bad request: %s", what) }
	if len(b) < 8 {
		return bad("no id")
	}
	r.ID, b = binary.BigEndian.Uint64(b), b[8:]
	// size reads a length that the rest of the message can hold: each
	// of n things takes a byte at least.
	size := func(what string) (int, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return 0, bad("the length of " + what)
		}
		b = b[k:]
		return int(n), nil
	}
	str := func(what string) (string, error) {
		n, err := size(what)
		if err != nil {
			return "", err
		}
		s := string(b[:n])
		b = b[n:]
		return s, nil
	}
	list := func(what string) ([]string, error) {
		n, err := size(what)
		if err != nil {
			return nil, err
		}
		out := make([]string, n)
		for i := range out {
			if out[i], err = str(what); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var err error
	if r.Prog, err = str("prog"); err != nil {
		return err
	}
	if r.Dir, err = str("dir"); err != nil {
		return err
	}
	if r.Argv, err = list("argv"); err != nil {
		return err
	}
	if r.Env, err = list("env"); err != nil {
		return err
	}
	if len(b) != 0 {
		return bad(fmt.Sprintf("%d bytes after its end", len(b)))
	}
	return nil
}

// reply is the init's word on a command (or, with ID 0, on itself).
type reply struct {
	ID uint64 `json:"id"`
	// Ready: the init waits for commands.
	Ready bool `json:"ready,omitempty"`
	// Started: the command runs; its pidfd rides along.
	Started bool `json:"started,omitempty"`
	// Exited: the command ended with Status (a wait status).
	Exited bool   `json:"exited,omitempty"`
	Status uint32 `json:"status,omitempty"`
	// Error: it could not start (Errno: the exec's errno, 0 for another
	// failure), or the init could not.
	Error string `json:"error,omitempty"`
	Errno int    `json:"errno,omitempty"`
	// Unprepared: the error is the sandbox's, not the command's (its
	// worker could not get ready): hitl falls back to a sandbox per
	// command.
	Unprepared bool `json:"unprepared,omitempty"`
	// HolderStuck: the command ended, but its holder (whose pidfd rides
	// along) did not when its lifeline closed (stopped from outside):
	// hitl, outside every domain, kills it.
	HolderStuck bool `json:"holder_stuck,omitempty"`
	// Spoiled: with the command's end none of the sandbox's runs, and its
	// own /dev/shm (inside bwrap) is not empty: what a command left
	// there would reach the next. hitl has this sandbox end and starts
	// the next command in a new one.
	Spoiled bool `json:"spoiled,omitempty"`
}

func (r reply) encode() ([]byte, error) { return json.Marshal(r) }

func (r *reply) decode(b []byte) error { return json.Unmarshal(b, r) }

// sock is an end of the socketpair, waited on through Go's poller: a
// goroutine waiting for a message holds no thread in a system call. (A
// thread blocked in recvmsg kept the runtime's monitor thread waking every
// 20 µs for as long as commands came: about 2 ms of CPU a command, in the
// init and in hitl, on the way of the next.)
type sock struct {
	f  *os.File
	rc syscall.RawConn
}

// newSock makes fd a sock (it owns fd from then on, even on error).
func newSock(fd int) (*sock, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "sandbox-socket")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &sock{f: f, rc: rc}, nil
}

// shutdown ends both directions: the other end reads the end, and a
// goroutine here waiting for a message gets io.EOF.
func (s *sock) shutdown() {
	_ = s.rc.Control(func(fd uintptr) { _ = unix.Shutdown(int(fd), unix.SHUT_RDWR) })
}

func (s *sock) close() { s.f.Close() }

// send writes m with fds. Callers serialize sends.
func (s *sock) send(m encoder, fds []int) error {
	body, err := m.encode()
	if err != nil {
		return err
	}
	if len(body) > maxMessage {
		return fmt.Errorf("sandbox: a message of %d bytes is over the limit of %d", len(body), maxMessage)
	}
	var head [4]byte
	binary.BigEndian.PutUint32(head[:], uint32(len(body)))
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	var serr error
	err = s.rc.Write(func(fd uintptr) bool {
		for {
			// Four bytes on a stream socket go whole or not at all.
			serr = unix.Sendmsg(int(fd), head[:], oob, nil, 0)
			if serr != unix.EINTR {
				return serr != unix.EAGAIN
			}
		}
	})
	if err != nil {
		// The poller's word: the socket was closed.
		return fmt.Errorf("%w (%v)", os.ErrClosed, err)
	}
	if serr != nil {
		return serr
	}
	_, err = s.f.Write(body)
	return err
}

// recv reads one message into m and the descriptors it carried (each
// close-on-exec). io.EOF is the other end gone.
func (s *sock) recv(m decoder) ([]*os.File, error) {
	var head [4]byte
	oob := make([]byte, unix.CmsgSpace(maxFDs*4))
	var n, oobn int
	var rerr error
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), head[:], oob, unix.MSG_CMSG_CLOEXEC)
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN
			}
		}
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, err
	}
	files, ferr := parseRights(oob[:oobn])
	if n == 0 {
		closeAll(files)
		return nil, io.EOF
	}
	if ferr != nil || n < len(head) {
		// A length never arrives split: it is one send of four bytes.
		closeAll(files)
		if ferr != nil {
			return nil, ferr
		}
		return nil, fmt.Errorf("sandbox: a short message header (%d bytes)", n)
	}
	size := binary.BigEndian.Uint32(head[:])
	if size > maxMessage {
		closeAll(files)
		return nil, fmt.Errorf("sandbox: a message of %d bytes is over the limit of %d", size, maxMessage)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(s.f, body); err != nil {
		closeAll(files)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if err := m.decode(body); err != nil {
		closeAll(files)
		if _, ok := m.(*reply); ok {
			err = fmt.Errorf("sandbox: a bad message: %w", err)
		}
		return nil, err
	}
	return files, nil
}

func parseRights(oob []byte) ([]*os.File, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "passed"))
		}
	}
	if len(files) > maxFDs {
		closeAll(files)
		return nil, fmt.Errorf("sandbox: a message with %d descriptors", len(files))
	}
	return files, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
