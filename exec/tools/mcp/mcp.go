// Package mcp gives the model the tools of an MCP server (DESIGN §10), through
// the official Go SDK: a stdio server in its own process group, or a remote
// one over streamable HTTP or SSE. It answers the server's elicitations
// (form and URL modes) through hitl's canonical questions, substitutes
// secret placeholders into arguments and masks results.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transports of a remote server.
const (
	TransportStreamable = "streamable"
	TransportSSE        = "sse"
)

// Defaults.
const (
	// DefaultTimeout bounds one tool call when Server.Timeout is 0. Time
	// spent asking a person does not count.
	DefaultTimeout = 10 * time.Minute
	// DefaultHandshake bounds starting a server: the process, the
	// initialize exchange and listing its tools.
	DefaultHandshake = 30 * time.Second
	// DefaultGrace is how long a stdio server has to exit after SIGTERM
	// before its process group is killed.
	DefaultGrace = 2 * time.Second
	// MaxMessage bounds one message from a server: a line on stdio, an
	// event or a JSON response over HTTP (the SDK's own frame bound).
	MaxMessage = 16 << 20
	// MaxTools bounds the tools one server may offer (its tools/list,
	// over all pages).
	MaxTools = 1000
)

// Server says how to reach one MCP server: Command for stdio, URL for a
// remote one.
type Server struct {
	// Name qualifies the server's tools in rules (mcp:NAME:TOOL), events
	// and errors. Empty: the command's base name, else the URL's host.
	Name string

	Command    string
	Args       []string
	Env        map[string]string // added to the inherited environment (Options.Environ)
	WorkingDir string            // the server's working directory ("" : hitl's)

	URL       string
	Transport string            // streamable (default) or sse
	Headers   map[string]string // sent with every HTTP request

	// Tools, when set, offers only these tools to the model; a name the
	// server does not have is an error.
	Tools []string
	// Timeout bounds one tool call (0: DefaultTimeout); it is paused while
	// a person answers an elicitation.
	Timeout time.Duration
}

// Secrets puts secret values into the arguments sent to the server and
// keeps them out of what it returns (prompt.Secrets).
type Secrets interface {
	Expand(text string) string
	Mask(text string) string
}

// Options is what a server's client needs from the run.
type Options struct {
	// Asker asks elicitations; nil declines them.
	Asker prompt.Questioner
	// Secrets: nil when the run has none.
	Secrets Secrets
	// Environ is the environment a stdio server inherits before
	// Server.Env. Nil: only SafeEnviron (the variables a program needs to
	// run: PATH, HOME, ...), so API keys and secrets in hitl's environment
	// do not reach a server that was not given them.
	Environ []string
	// Handshake bounds starting the server (0: DefaultHandshake).
	Handshake time.Duration
	// Grace is the time between SIGTERM and SIGKILL on Close (0:
	// DefaultGrace).
	Grace time.Duration
	// Sandbox starts a stdio server (DESIGN §12).
	Sandbox *sandbox.Sandbox
	// HTTPClient makes the requests of a remote server (nil: a client
	// without a global timeout; calls are bounded by Server.Timeout).
	HTTPClient *http.Client
	// Roots are the directories offered to the server (roots/list). Nil:
	// the working directory.
	Roots []string
	// Kept are the states of calls a stopped run kept (Keep), by call id:
	// a resumed run continues those calls from them (rounds.go).
	Kept map[string]json.RawMessage
	// Keep is told the state of a call stopped while its server waited
	// for input (protocol 2026-07-28), to keep in the session; nil state:
	// forget the call's state. It never holds a secret value.
	Keep func(callID string, state json.RawMessage)
	// Notice tells a person what they must know that is not an event (a
	// kept state the server no longer accepts).
	Notice func(msg string)
}

// Client is a connected MCP server.
type Client struct {
	name    string
	server  Server
	opts    Options
	timeout time.Duration
	session *sdk.ClientSession
	proc    *process // nil for a remote server
	tools   []*Tool

	mu     sync.Mutex
	active []*callState // calls in flight, oldest first
	// kept are the states of Options.Kept not yet taken: each continues
	// the one call it was kept for, once (keptState).
	kept map[string]json.RawMessage

	// life outlives the handshake: a remote transport's streams use it.
	life    context.Context
	endLife context.CancelFunc

	closeOnce sync.Once
	closeErr  error

	order fieldOrder // the order of each form's fields, as the server wrote them
}

// Start starts (stdio) or connects to (remote) the server, completes the
// handshake and lists its tools, all within Options.Handshake. The error
// names the server and, for a stdio server, ends with the last lines of its
// stderr. On error nothing is left running.
func Start(ctx context.Context, s Server, opts Options) (*Client, error) {
	c := &Client{server: s, opts: opts, name: ServerName(s), timeout: s.Timeout, kept: maps.Clone(opts.Kept)}
	c.life, c.endLife = context.WithCancel(context.WithoutCancel(ctx))
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	handshake := opts.Handshake
	if handshake <= 0 {
		handshake = DefaultHandshake
	}
	hctx, cancel := context.WithTimeoutCause(ctx, handshake, errHandshakeTimeout)
	defer cancel()
	err := c.start(hctx)
	if err != nil {
		if errors.Is(context.Cause(hctx), errHandshakeTimeout) {
			err = fmt.Errorf("no handshake within %s", handshake)
		}
		c.Close()
		return nil, c.failure("cannot start", err)
	}
	return c, nil
}

var errHandshakeTimeout = errors.New("handshake timeout")

func (c *Client) start(ctx context.Context) error {
	var transport sdk.Transport
	switch {
	case c.server.Command != "" && c.server.URL != "":
		return errors.New("give a command or a url, not both")
	case c.server.Command != "":
		p, t, err := startProcess(c.server, c.opts)
		if err != nil {
			return err
		}
		t.Reader = &orderBody{ReadCloser: t.Reader, r: &orderReader{r: t.Reader, order: &c.order}}
		c.proc, transport = p, t
	case c.server.URL != "":
		t, err := remoteTransport(c.server, c.opts, &c.order)
		if err != nil {
			return err
		}
		transport = &lasting{Transport: t, ctx: c.life}
	default:
		return errors.New("no command and no url")
	}

	client := sdk.NewClient(&sdk.Implementation{Name: "hitl", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: c.elicit,
		// hitl does the rounds of a call that needs input itself, so a
		// stopped run can keep their state (rounds.go).
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		Capabilities: &sdk.ClientCapabilities{
			RootsV2: &sdk.RootCapabilities{},
			Elicitation: &sdk.ElicitationCapabilities{
				Form: &sdk.FormElicitationCapabilities{},
				URL:  &sdk.URLElicitationCapabilities{},
			},
		},
	})
	client.AddRoots(c.roots()...)
	session, err := connect(ctx, client, transport, c.proc)
	if err != nil {
		if ctx.Err() != nil {
			return err // the handshake's time is up; the server may well be alive
		}
		return c.died(err)
	}
	c.session = session

	var all []*sdk.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing its tools: %w", c.died(err))
		}
		if len(all) == MaxTools {
			return fmt.Errorf("listing its tools: it offers more than %d tools", MaxTools)
		}
		all = append(all, t)
	}
	return c.offer(all)
}

// connect runs the handshake; a stdio server that exits during it ends it at
// once instead of at the handshake's deadline.
func connect(ctx context.Context, client *sdk.Client, t sdk.Transport, p *process) (*sdk.ClientSession, error) {
	if p == nil {
		return client.Connect(ctx, t, nil)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(p.exitedCtx, func() { cancel(p.exitError()) })
	defer stop()
	s, err := client.Connect(ctx, t, nil)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && p.hasExited() {
			return nil, cause
		}
		return nil, err
	}
	return s, nil
}

// lasting connects a transport with a context that outlives the handshake
// (an SSE stream lives as long as the GET request that opened it).
type lasting struct {
	sdk.Transport
	ctx context.Context
}

func (l *lasting) Connect(context.Context) (sdk.Connection, error) { return l.Transport.Connect(l.ctx) }

// offer keeps the tools the filter names, in the server's order.
func (c *Client) offer(all []*sdk.Tool) error {
	have := map[string]bool{}
	for _, t := range all {
		have[t.Name] = true
	}
	for _, name := range c.server.Tools {
		if !have[name] {
			names := make([]string, 0, len(all))
			for _, t := range all {
				names = append(names, t.Name)
			}
			return fmt.Errorf("tools: the server has no tool %q (it has %v)", name, names)
		}
	}
	for _, t := range all {
		if len(c.server.Tools) > 0 && !slices.Contains(c.server.Tools, t.Name) {
			continue
		}
		tool, err := newTool(c, t)
		if err != nil {
			return err
		}
		c.tools = append(c.tools, tool)
	}
	return nil
}

func (c *Client) roots() []*sdk.Root {
	dirs := c.opts.Roots
	if dirs == nil {
		if wd, err := os.Getwd(); err == nil {
			dirs = []string{wd}
		}
	}
	roots := make([]*sdk.Root, 0, len(dirs))
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			roots = append(roots, &sdk.Root{URI: "file://" + filepath.ToSlash(abs), Name: filepath.Base(abs)})
		}
	}
	return roots
}

// Name is the server's name in rules, events and errors.
func (c *Client) Name() string { return c.name }

// Tools returns the server's tools (filtered by Server.Tools) under their own
// names. Each is an exec.Acting.
func (c *Client) Tools() []exec.Tool {
	out := make([]exec.Tool, len(c.tools))
	for i, t := range c.tools {
		out[i] = t
	}
	return out
}

// Close ends the session and, for a stdio server, stops its whole process
// group: SIGTERM, then SIGKILL after Options.Grace. It waits for the server's
// process to be gone. Safe to call more than once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		defer c.endLife()
		if c.proc != nil {
			// Signal first: closing the session waits on the process.
			c.closeErr = c.proc.stop()
		}
		if c.session != nil {
			done := make(chan struct{})
			go func() {
				_ = c.session.Close()
				close(done)
			}()
			// A remote session's close is a courtesy (an HTTP DELETE a
			// busy server may hold): it gets a second, not the run's end.
			select {
			case <-done:
			case <-time.After(time.Second):
			}
		}
	})
	return c.closeErr
}

// Kill kills a stdio server's whole process group at once, without
// waiting: for a hard exit (a second Ctrl-C), where Close has no time.
func (c *Client) Kill() {
	if c.proc != nil {
		c.proc.kill()
	}
}

func (o Options) grace() time.Duration {
	if o.Grace > 0 {
		return o.Grace
	}
	return DefaultGrace
}

// failure is an infrastructure error naming the server, with the tail of
// its stderr.
func (c *Client) failure(what string, err error) error {
	return &ServerError{Server: c.name, What: what, Err: err, Stderr: c.stderrTail()}
}

func (c *Client) stderrTail() string {
	if c.proc == nil {
		return ""
	}
	tail := c.proc.stderr.Tail(stderrTailLines)
	if c.opts.Secrets != nil {
		tail = c.opts.Secrets.Mask(tail)
	}
	return tail
}

const stderrTailLines = 10

// died turns a connection error into the process's exit when the stdio
// server has exited.
func (c *Client) died(err error) error {
	if c.proc == nil {
		return err
	}
	select {
	case <-c.proc.exitedCtx.Done():
	case <-time.After(time.Second):
		return err
	}
	return fmt.Errorf("%w (%v)", c.proc.exitError(), err)
}

// ServerError is an MCP server that cannot start, exited or failed: a tool
// infrastructure failure (exit 1).
type ServerError struct {
	Server string
	What   string // "cannot start", "failed during a call of X"
	Err    error
	Stderr string // the last lines of its stderr, escaped; "" for a remote server
}

func (e *ServerError) Error() string {
	msg := fmt.Sprintf("mcp server %q %s: %v", e.Server, e.What, e.Err)
	if e.Stderr != "" {
		msg += "\nits last stderr lines:\n" + e.Stderr
	}
	return msg
}

func (e *ServerError) Unwrap() error { return e.Err }

// ServerName is the server's name: Name, else the command's base name, else
// the URL's host.
func ServerName(s Server) string {
	if s.Name != "" {
		return s.Name
	}
	if s.Command != "" {
		return filepath.Base(s.Command)
	}
	if h := urlHost(s.URL); h != "" {
		return h
	}
	return "mcp"
}
