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
// Each message is a 4-byte big-endian length and that much JSON; the
// descriptors a message carries (a command's stdin, stdout and stderr; a
// started command's pidfd) ride on the length's sendmsg.

// maxMessage bounds a message read (an environment and argv within the
// kernel's own limit on them, 2 MiB, with room to spare).
const maxMessage = 16 << 20

// maxFDs is the most descriptors a message carries.
const maxFDs = 3

// request asks the init to start a command. Its strings go as bytes
// (base64 in JSON): JSON would turn bytes that are not UTF-8 into U+FFFD,
// and what runs must be what was checked, byte for byte.
type request struct {
	ID   uint64   `json:"id"`
	Prog []byte   `json:"prog"`
	Argv [][]byte `json:"argv"`
	Env  [][]byte `json:"env"`
	Dir  []byte   `json:"dir,omitempty"`
}

// newRequest is the request to start prog with argv, env, in dir.
func newRequest(prog string, argv, env []string, dir string) request {
	return request{Prog: []byte(prog), Argv: toBytes(argv), Env: toBytes(env), Dir: []byte(dir)}
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func toStrings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
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
}

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

// send writes v with fds. Callers serialize sends.
func (s *sock) send(v any, fds []int) error {
	body, err := json.Marshal(v)
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
	if err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	_, err = s.f.Write(body)
	return err
}

// recv reads one message into v and the descriptors it carried (each
// close-on-exec). io.EOF is the other end gone.
func (s *sock) recv(v any) ([]*os.File, error) {
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
	if err := json.Unmarshal(body, v); err != nil {
		closeAll(files)
		return nil, fmt.Errorf("sandbox: a bad message: %w", err)
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
