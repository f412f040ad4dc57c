package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"

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

// sendMsg writes v with fds on the socket fd. Callers serialize sends.
func sendMsg(fd int, v any, fds []int) error {
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
	if err := unix.Sendmsg(fd, head[:], oob, nil, 0); err != nil {
		return err
	}
	for len(body) > 0 {
		n, err := unix.Write(fd, body)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		body = body[n:]
	}
	return nil
}

// recvMsg reads one message into v and the descriptors it carried (each
// close-on-exec). io.EOF is the other end gone.
func recvMsg(fd int, v any) ([]*os.File, error) {
	var head [4]byte
	oob := make([]byte, unix.CmsgSpace(maxFDs*4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(fd, head[:], oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
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
	for got := 0; got < len(body); {
		m, err := unix.Read(fd, body[got:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || m == 0 {
			closeAll(files)
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		got += m
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
