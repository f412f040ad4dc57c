package ext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/internal/termtext"
)

// Program is the companion's name; EnvVar, when set, is its path.
const (
	Program = "hitl-ext"
	EnvVar  = "HITL_EXT"
	// Package is what `go install` takes to install it.
	Package = "github.com/hitl-dev/hitl/cmd/hitl-ext"
)

// NotFoundError is a hitl-ext that could not be found.
type NotFoundError struct {
	Need   string   // what needs it ("model gemini (provider google)")
	Looked []string // where hitl looked
	Err    error    // why the last place failed
}

func (e *NotFoundError) Error() string {
	why := ""
	if e.Err != nil {
		why = ": " + e.Err.Error()
	}
	return fmt.Sprintf("%s needs %s, hitl's companion program (it holds the packages few agent files need, so that hitl itself starts fast), and hitl found none (looked: %s%s); install it next to hitl with: go install %s@%s (or set %s to its path)",
		e.Need, Program, strings.Join(e.Looked, ", "), why, Package, installVersion(), EnvVar)
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// installVersion is hitl's module version, for the install hint.
func installVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "latest"
}

// Find is hitl-ext's path: $HITL_EXT, else hitl-ext next to hitl's own
// executable (where go install puts both), else on PATH (its absolute
// entries only). need says what needs it, for the error.
func Find(need string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	e := &NotFoundError{Need: need}
	if p := getenv(EnvVar); p != "" {
		e.Looked = append(e.Looked, EnvVar+"="+p)
		if !filepath.IsAbs(p) {
			e.Err = fmt.Errorf("%s=%s is not an absolute path", EnvVar, p)
			return "", e
		}
		path, err := sandbox.LookPath(p, "", nil)
		if err != nil {
			e.Err = err
			return "", e
		}
		return path, nil
	}
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		p := filepath.Join(filepath.Dir(self), Program)
		e.Looked = append(e.Looked, p)
		if path, err := sandbox.LookPath(p, "", nil); err == nil {
			return path, nil
		}
	}
	e.Looked = append(e.Looked, "PATH")
	path, err := sandbox.LookPath(Program, "", []string{"PATH=" + getenv("PATH")})
	if err != nil {
		e.Err = err
		return "", e
	}
	return path, nil
}

// Client is a started hitl-ext.
type Client struct {
	conn   *Conn
	cmd    *sandbox.Cmd
	stdin  io.WriteCloser
	stderr *tail
	hello  Hello

	mu      sync.Mutex
	nextID  uint32
	waits   map[uint32]chan Frame
	handler func(Frame)

	done chan struct{} // closed when the reader ends
	err  error         // why it ended

	silence atomic.Int64  // SetSilence's
	last    atomic.Int64  // when it last showed life (UnixNano)
	killed  atomic.Value  // why hitl killed it (a string), if it did
	writers chan struct{} // a slot per write waiting for it (Go)
}

// MaxWriters bounds the writes to hitl-ext that may wait at once (Go): a
// hitl-ext that stops reading what hitl sends is killed, not fed.
const MaxWriters = 16

// SetSilence sets how long hitl-ext may show no life while a call waits:
// past it, it is killed (stopped, or wedged) and the call fails saying so.
// 0: no bound.
func (c *Client) SetSilence(d time.Duration) { c.silence.Store(int64(d)) }

// Touch counts as a sign of hitl-ext's life (what it waits for arrived).
func (c *Client) Touch() { c.last.Store(time.Now().UnixNano()) }

// Abort kills hitl-ext, saying why in the error of its calls.
func (c *Client) Abort(why string) {
	c.killed.CompareAndSwap(nil, why)
	c.cmd.Kill()
}

// Go runs write (a send to hitl-ext) on a goroutine of its own; when
// MaxWriters already wait, hitl-ext is not reading and is aborted.
func (c *Client) Go(write func()) {
	select {
	case c.writers <- struct{}{}:
	default:
		c.Abort(fmt.Sprintf("it did not read what hitl sent (%d writes waiting), and was killed", MaxWriters))
		return
	}
	go func() {
		defer func() { <-c.writers }()
		write()
	}()
}

// replyTypes answer a call of the same id.
func isReply(t byte) bool { return t == TTurnDone || t == TOpenAPIOut || t == THTMLOut }

// HelloTimeout bounds hitl-ext's start, to its hello.
var HelloTimeout = 30 * time.Second

// Start starts hitl-ext at path in sb (the policy of a command nobody saw:
// it reaches nothing; everything it needs comes over the wire), with an
// empty environment. handler receives the frames that answer no call (the
// tunnel's requests, deltas); it runs on the reading goroutine and must not
// block. hitl-ext ends when Close is called or hitl ends.
func Start(sb *sandbox.Sandbox, path string, handler func(Frame)) (*Client, error) {
	c := &Client{stderr: &tail{max: 4096}, waits: map[uint32]chan Frame{}, handler: handler, done: make(chan struct{}), writers: make(chan struct{}, MaxWriters)}
	// Where no mechanism confines anything, it runs as hitl's other
	// children do there (a command nobody saw could not run at all).
	class := sandbox.ClassAuto
	if sb.Mechanism() == sandbox.MechNone {
		class = sandbox.ClassHook
	}
	c.cmd = sb.Command(context.Background(), sandbox.Spec{Path: path, Env: []string{}, Stderr: c.stderr, Class: class})
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	c.stdin = stdin
	c.conn = NewConn(stdout, stdin)
	c.Touch()
	hello := make(chan Frame, 1)
	go c.read(hello)
	go c.watch()
	select {
	case f, ok := <-hello:
		if !ok {
			c.Close()
			return nil, fmt.Errorf("%s ended before its hello: %w", path, c.err)
		}
		if f.Type != THello || json.Unmarshal(f.Data, &c.hello) != nil {
			c.Close()
			return nil, fmt.Errorf("%s is not hitl's companion program: its first message is not a hello", path)
		}
		if c.hello.Proto != Proto {
			c.Close()
			return nil, fmt.Errorf("%s speaks protocol %d, this hitl %d: install the hitl-ext of hitl's version (go install %s@%s)", path, c.hello.Proto, Proto, Package, installVersion())
		}
	case <-time.After(HelloTimeout):
		c.Close()
		return nil, fmt.Errorf("%s did not say hello within %s", path, HelloTimeout)
	}
	return c, nil
}

func (c *Client) read(hello chan Frame) {
	defer close(c.done)
	first := true
	for {
		f, err := c.conn.Read()
		if err != nil {
			if err == io.EOF {
				err = errors.New("it exited")
			} else {
				// It broke the wire: it is not let run.
				c.cmd.Kill()
			}
			// Its exit status and last words say more than the pipe.
			_ = c.stdin.Close()
			werr := c.wait()
			msg := err.Error()
			if why, ok := c.killed.Load().(string); ok {
				msg = why
			}
			if werr != nil {
				msg += " (" + sandbox.Describe(werr) + ")"
			}
			if s := strings.TrimSpace(c.stderr.String()); s != "" {
				// Its last words may quote what it read (a server's,
				// a document's bytes): escaped for the terminal.
				msg += ": " + termtext.Text(s)
			}
			c.mu.Lock()
			c.err = errors.New(msg)
			c.mu.Unlock()
			if first {
				close(hello)
			}
			return
		}
		c.Touch()
		if first {
			first = false
			hello <- f
			continue
		}
		if isReply(f.Type) {
			c.mu.Lock()
			ch := c.waits[f.ID]
			delete(c.waits, f.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- f
			}
			continue
		}
		c.handler(f)
	}
}

// watch kills hitl-ext when it has been silent for Silence while a call
// waits: a stopped or wedged companion fails its call, never hangs it (a
// blocked write to it ends with it too).
func (c *Client) watch() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-tick.C:
		}
		d := time.Duration(c.silence.Load())
		if d <= 0 {
			continue
		}
		c.mu.Lock()
		waiting := len(c.waits) > 0
		c.mu.Unlock()
		if waiting && time.Since(time.Unix(0, c.last.Load())) > d {
			c.Abort(fmt.Sprintf("it sent nothing for %s while a call waited (stopped or wedged), and was killed", d))
			return
		}
	}
}

// wait waits for hitl-ext, which closed its stdout or broke the wire,
// to exit: a process that goes on without its wire is killed.
func (c *Client) wait() error {
	ch := make(chan error, 1)
	go func() { ch <- c.cmd.Wait() }()
	select {
	case err := <-ch:
		return err
	case <-time.After(2 * time.Second):
		c.cmd.Kill()
		return <-ch
	}
}

// Dead reports whether hitl-ext has ended.
func (c *Client) Dead() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Send writes a frame to hitl-ext.
func (c *Client) Send(t byte, id uint32, data []byte) error { return c.conn.Send(t, id, data) }

// SendJSON writes a frame of v as JSON to hitl-ext.
func (c *Client) SendJSON(t byte, id uint32, v any) error { return c.conn.SendJSON(t, id, v) }

// CancelGrace is how long a cancelled call waits for hitl-ext's answer.
var CancelGrace = time.Second

// Call sends v as a frame of type t and waits for its reply. When ctx ends
// first, hitl-ext is told (TCancel) and ctx's error is returned.
func (c *Client) Call(ctx context.Context, t byte, v any) (Frame, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan Frame, 1)
	c.waits[id] = ch
	c.Touch() // its silence is counted from the call, not from before
	c.mu.Unlock()
	// Sent while the call waits: a hitl-ext that stopped reading cannot
	// hold the caller past its context or its silence.
	sent := make(chan error, 1)
	go func() { sent <- c.SendJSON(t, id, v) }()
	select {
	case err := <-sent:
		if err != nil {
			c.forget(id)
			return Frame{}, c.ended(err)
		}
	case <-c.done:
		c.forget(id)
		return Frame{}, c.ended(nil)
	case <-ctx.Done():
		c.forget(id)
		return Frame{}, context.Cause(ctx)
	}
	select {
	case f := <-ch:
		return f, nil
	case <-c.done:
		return Frame{}, c.ended(nil)
	case <-ctx.Done():
		// Told without waiting: a stopped hitl-ext does not read.
		go func() { _ = c.Send(TCancel, id, nil) }()
		select {
		case <-ch:
		case <-c.done:
		case <-time.After(CancelGrace):
		}
		c.forget(id)
		return Frame{}, context.Cause(ctx)
	}
}

func (c *Client) forget(id uint32) {
	c.mu.Lock()
	delete(c.waits, id)
	c.mu.Unlock()
}

// ended is the error of a call hitl-ext did not answer.
func (c *Client) ended(err error) error {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return fmt.Errorf("%s ended: %v", Program, c.err)
	case <-time.After(time.Second):
		return fmt.Errorf("%s: %w", Program, err)
	}
}

// Close ends hitl-ext: its stdin closes (it exits at once), and it is
// stopped if it does not.
func (c *Client) Close() {
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(time.Second):
		c.cmd.Kill()
		<-c.done
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
