package tty

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
)

// Key bytes the reader looks at.
const (
	keyInterrupt = 0x03 // Ctrl-C: survey's interrupt byte
	keyEOT       = 0x04 // Ctrl-D
	keyEscape    = 0x1b
)

// chunk is the result of one read on the terminal.
type chunk struct {
	data []byte
	err  error
}

// keySource reads the terminal in one long-lived goroutine and hands what it
// reads, one read at a time, to whichever prompt is asking. A prompt that
// ends (answered, dismissed, timed out) leaves the goroutine blocked in Read;
// the keys it reads next go to the next prompt instead of being lost.
type keySource struct {
	f  *os.File
	fd uintptr // f's descriptor, for survey's termios calls

	once   sync.Once
	chunks chan chunk    // unbuffered: a read waits for a prompt to take it
	done   chan struct{} // closed when the terminal can no longer be read
	err    error         // why, set before done is closed
}

func newKeySource(f *os.File) *keySource {
	return &keySource{f: f, fd: rawFd(f), chunks: make(chan chunk), done: make(chan struct{})}
}

// rawFd returns f's descriptor without os.File.Fd's side effect of putting
// it in blocking mode: a terminal opened by hitl (/dev/tty) stays in the
// poller, so closing it ends a read in progress.
func rawFd(f *os.File) uintptr {
	rc, err := f.SyscallConn()
	if err != nil {
		return f.Fd()
	}
	var fd uintptr
	if rc.Control(func(x uintptr) { fd = x }) != nil {
		return f.Fd()
	}
	return fd
}

// fdWriter is the output survey draws on: the terminal, with its descriptor
// (for the terminal's width) taken by rawFd.
type fdWriter struct {
	f  *os.File
	fd uintptr
}

func (w fdWriter) Write(p []byte) (int, error) { return w.f.Write(p) }
func (w fdWriter) Fd() uintptr                 { return w.fd }

func (s *keySource) start() {
	s.once.Do(func() { go s.run() })
}

func (s *keySource) run() {
	for {
		buf := make([]byte, 256)
		n, err := s.f.Read(buf)
		if n > 0 {
			s.chunks <- chunk{data: buf[:n]}
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			// A terminal in canonical mode reads end of file when Ctrl-D
			// is pressed between prompts; it is not the end of the
			// terminal. The send blocks until a prompt takes it, so a
			// hung-up terminal does not make this loop spin.
			s.chunks <- chunk{err: io.EOF}
		default:
			s.err = err
			close(s.done)
			return
		}
	}
}

// discardPending drops what was read while no question was shown (keys
// pressed while the model was thinking), so a stray Enter never answers the
// next question. It is bounded: a hung-up terminal reads end of file forever.
func (s *keySource) discardPending() {
	for range 64 {
		select {
		case <-s.chunks:
		default:
			return
		}
	}
}

// keyReader is what one question gives survey as its input: a
// terminal.FileReader (io.Reader + Fd) over the keySource. A read of exactly
// one byte ESC (a lone Esc key press; arrow keys arrive as whole ESC [ A
// sequences) or Ctrl-D becomes survey's interrupt byte and is remembered as a
// dismissal; survey has no dismiss key of its own and submits the highlighted
// option on Ctrl-D. When ctx ends, reads fail, so survey returns and restores
// the terminal.
type keyReader struct {
	ctx       context.Context
	src       *keySource
	pending   []byte
	dismissed bool
}

func (r *keyReader) Fd() uintptr { return r.src.fd }

func (r *keyReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(r.pending) == 0 {
		if err := r.ctx.Err(); err != nil {
			return 0, context.Cause(r.ctx)
		}
		select {
		case <-r.ctx.Done():
			return 0, context.Cause(r.ctx)
		case <-r.src.done:
			return 0, r.src.err
		case c := <-r.src.chunks:
			if c.err != nil {
				return 0, c.err
			}
			r.pending = r.translate(c.data)
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// translate turns a lone Esc or Ctrl-D into an interrupt remembered as a
// dismissal, and drops the ESC of Alt+key chords (ESC followed by anything
// but [ or O), which survey would fail on as an unexpected escape sequence.
func (r *keyReader) translate(data []byte) []byte {
	if (len(data) == 1 && data[0] == keyEOT) || allEscapes(data) {
		r.dismissed = true
		return []byte{keyInterrupt}
	}
	if len(data) > 1 && data[0] == keyEscape && data[1] != '[' && data[1] != 'O' {
		return data[1:]
	}
	return data
}

// allEscapes reports a read of only ESC bytes: Esc pressed (once, or again
// before hitl read the first).
func allEscapes(data []byte) bool {
	for _, b := range data {
		if b != keyEscape {
			return false
		}
	}
	return len(data) > 0
}
