package tty

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"sync"
	"time"
)

// Key bytes the reader looks at.
const (
	keyInterrupt = 0x03 // Ctrl-C: survey's interrupt byte
	keyEOT       = 0x04 // Ctrl-D
	keyEscape    = 0x1b
)

// maxPending bounds what the key reader holds for a question not yet
// reading (a paste while survey draws); beyond it keys are dropped.
const maxPending = 64 << 10

// chunk is the result of one read on the terminal and when it came.
type chunk struct {
	data []byte
	at   time.Time
	err  error
}

// keySource reads the terminal in one goroutine that starts with the front
// end and lives as long as the terminal. While no question is asked, what
// it reads is dropped at once: keys typed while a command runs or the model
// thinks never reach a question (DESIGN §4 "Type-ahead never answers"). While
// a question is asked, reads are kept, stamped with the time they came, and
// the question's reader drops those that came before it was drawn.
type keySource struct {
	f  *os.File
	fd uintptr // f's descriptor, for survey's termios calls

	mu      sync.Mutex
	asking  bool    // a question is being asked
	pending []chunk // reads kept for the question, oldest first
	size    int     // bytes in pending
	notify  chan struct{}
	done    chan struct{} // closed when the terminal can no longer be read
	err     error         // why, set before done is closed

	// cooked says the terminal could not be put in the front end's own
	// mode: an end of file between questions may be Ctrl-D in canonical
	// mode rather than the end of the terminal.
	cooked bool
}

func newKeySource(f *os.File, cooked bool) *keySource {
	s := &keySource{f: f, fd: rawFd(f), cooked: cooked, notify: make(chan struct{}, 1), done: make(chan struct{})}
	go s.run()
	return s
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

func (s *keySource) run() {
	for {
		buf := make([]byte, 256)
		n, err := s.f.Read(buf)
		at := time.Now()
		if n > 0 {
			s.keep(chunk{data: buf[:n], at: at})
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF) && s.cooked:
			// A terminal in canonical mode reads end of file when
			// Ctrl-D is pressed between prompts; it is not the end of
			// the terminal. A hung-up terminal reads end of file
			// forever: the pause keeps this loop from spinning.
			s.keep(chunk{err: io.EOF, at: at})
			time.Sleep(20 * time.Millisecond)
		default:
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
			close(s.done)
			return
		}
	}
}

// keep holds c for the question being asked, or drops it when none is.
func (s *keySource) keep(c chunk) {
	s.mu.Lock()
	if !s.asking || s.size+len(c.data) > maxPending {
		s.mu.Unlock()
		return
	}
	s.pending = append(s.pending, c)
	s.size += len(c.data)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// begin starts a question: what was read before is dropped, and what comes
// from now on is kept for it.
func (s *keySource) begin() {
	s.mu.Lock()
	s.asking, s.pending, s.size = true, nil, 0
	s.mu.Unlock()
}

// end ends a question: what it did not read is dropped, and so is what
// comes until the next one begins.
func (s *keySource) end() {
	s.mu.Lock()
	s.asking, s.pending, s.size = false, nil, 0
	s.mu.Unlock()
}

// next waits for keys for the question being asked. Reads that came before
// drawn (typed before the question was on the screen) are dropped, except
// the terminal's answers to survey's cursor queries; reads that came before
// open (the first moments of a consent question) are dropped too, except
// those answers and Ctrl-C (an interrupt answers nothing).
func (s *keySource) next(ctx context.Context, drawn, open time.Time) ([]byte, error) {
	for {
		s.mu.Lock()
		for len(s.pending) > 0 {
			c := s.pending[0]
			s.pending = s.pending[1:]
			s.size -= len(c.data)
			if c.err != nil {
				if c.at.Before(drawn) {
					continue // Ctrl-D pressed before the question
				}
				s.mu.Unlock()
				return nil, c.err
			}
			data := c.data
			switch {
			case c.at.Before(drawn):
				data = keepReplies(data, false)
			case c.at.Before(open):
				data = keepReplies(data, true)
			}
			if len(data) > 0 {
				s.mu.Unlock()
				return data, nil
			}
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-s.done:
			s.mu.Lock()
			empty := len(s.pending) == 0
			s.mu.Unlock()
			if empty {
				return nil, s.err
			}
		case <-s.notify:
		}
	}
}

// cursorReply is a terminal's answer to ESC[6n (where is the cursor),
// which survey's Input, Confirm and Password wait for.
var cursorReply = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[\d+;\d+R`) })

// keepReplies returns the cursor position replies in data (and Ctrl-C with
// interrupts), dropping every key.
func keepReplies(data []byte, interrupts bool) []byte {
	var out []byte
	last := 0
	for _, m := range cursorReply().FindAllIndex(data, -1) {
		if interrupts {
			out = appendInterrupts(out, data[last:m[0]])
		}
		out = append(out, data[m[0]:m[1]]...)
		last = m[1]
	}
	if interrupts {
		out = appendInterrupts(out, data[last:])
	}
	return out
}

func appendInterrupts(out, data []byte) []byte {
	for _, b := range data {
		if b == keyInterrupt {
			out = append(out, b)
		}
	}
	return out
}

// keyReader is what one survey prompt gives survey as its input: a
// terminal.FileReader (io.Reader + Fd) over the keySource. A read of exactly
// one byte ESC (a lone Esc key press; arrow keys arrive as whole ESC [ A
// sequences) or Ctrl-D becomes survey's interrupt byte and is remembered as a
// dismissal; survey has no dismiss key of its own and submits the highlighted
// option on Ctrl-D. When ctx ends, reads fail, so survey returns and restores
// the terminal.
//
// Keys typed before the prompt was drawn never reach it, and on a consent
// question neither do keys typed in its first hold (DESIGN §4).
type keyReader struct {
	ctx       context.Context
	src       *keySource
	pending   []byte
	dismissed bool

	mark    *drawMark     // when the prompt was drawn
	hold    time.Duration // how long after the drawing keys are dropped
	started bool
	drawn   time.Time
	open    time.Time

	// failed is why the last read failed (the question's context ended,
	// the terminal was closed), if one did.
	failed error
}

func (r *keyReader) Fd() uintptr { return r.src.fd }

// reset readies the reader for the next survey prompt of the question: keys
// typed before that prompt is drawn never reach it.
func (r *keyReader) reset(mark *drawMark) {
	r.pending, r.started, r.mark, r.failed = nil, false, mark, nil
}

func (r *keyReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !r.started {
		// survey reads only once the prompt is drawn.
		r.started = true
		r.drawn = r.mark.at()
		r.open = r.drawn.Add(r.hold)
	}
	for len(r.pending) == 0 {
		if err := r.ctx.Err(); err != nil {
			r.failed = context.Cause(r.ctx)
			return 0, r.failed
		}
		data, err := r.src.next(r.ctx, r.drawn, r.open)
		if err != nil {
			r.failed = err
			return 0, err
		}
		r.pending = r.translate(data)
	}
	n := copy(p, r.pending[:readEnd(r.pending)])
	r.pending = r.pending[n:]
	return n, nil
}

// readEnd is how much of pending one Read may give: up to and including
// its first R. survey's Input, Confirm and Password ask the terminal where
// the cursor is and read its answer (ESC [ row ; col R) through a
// bufio.Reader of their own, up to the first R; whatever that reader took
// in beyond it is thrown away. Keys come on the same stream as the answer,
// and a busy machine reads them together: keys typed just after the prompt
// was drawn would be lost (the Enter after them getting through alone, or
// Esc lost and the prompt waiting on). Ending each read at an R leaves that
// reader nothing beyond it: keys after the answer stay here for the prompt,
// and keys before it (an R among them too) are kept by survey.
func readEnd(pending []byte) int {
	if i := bytes.IndexByte(pending, 'R'); i >= 0 {
		return i + 1
	}
	return len(pending)
}

// translate turns a lone Esc or Ctrl-D into an interrupt remembered as a
// dismissal, and drops the ESC of Alt+key chords (ESC followed by anything
// but [ or O), which survey would fail on as an unexpected escape sequence.
// The terminal's answers to cursor queries are passed on as they are, and
// the keys around them are looked at on their own: on a busy machine an Esc
// pressed just after a prompt was drawn is read together with the answer.
func (r *keyReader) translate(data []byte) []byte {
	replies := cursorReply().FindAllIndex(data, -1)
	if len(replies) == 0 {
		return r.translateKeys(data)
	}
	var out []byte
	last := 0
	for _, m := range replies {
		out = append(out, r.translateKeys(data[last:m[0]])...)
		out = append(out, data[m[0]:m[1]]...)
		last = m[1]
	}
	return append(out, r.translateKeys(data[last:])...)
}

// translateKeys translates one read's keys (no cursor answers among them).
func (r *keyReader) translateKeys(data []byte) []byte {
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

// drawMark watches what a survey prompt writes and remembers when it first
// wrote text (not only cursor movements): the moment the question is on
// the screen.
type drawMark struct {
	fdWriter
	mu    sync.Mutex
	drawn time.Time
}

// Write stamps the drawing as it begins: a key that comes once the text is
// on its way to the screen may be an answer to it, even if this goroutine
// has not yet been scheduled again after the write.
func (m *drawMark) Write(p []byte) (int, error) {
	if drawsText(p) {
		m.mu.Lock()
		if m.drawn.IsZero() {
			m.drawn = time.Now()
		}
		m.mu.Unlock()
	}
	return m.fdWriter.Write(p)
}

// at is when the prompt was drawn; now if it drew no text yet.
func (m *drawMark) at() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.drawn.IsZero() {
		return time.Now()
	}
	return m.drawn
}

// drawsText reports whether p holds a printable character outside escape
// sequences.
func drawsText(p []byte) bool {
	for i := 0; i < len(p); i++ {
		b := p[i]
		if b == keyEscape {
			i++
			if i < len(p) && p[i] == '[' {
				for i++; i < len(p) && (p[i] < 0x40 || p[i] > 0x7e); i++ {
				}
			}
			continue
		}
		if b > ' ' && b != 0x7f {
			return true
		}
	}
	return false
}
