package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/internal/termtext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// SafeEnviron names the variables a stdio server inherits from hitl's
// environment when Options.Environ is nil.
var SafeEnviron = []string{
	"HOME", "LOGNAME", "USER", "PATH", "SHELL", "TERM", "TMPDIR", "TZ",
	"LANG", "LC_ALL", "LC_CTYPE", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"NODE_PATH", "NPM_CONFIG_CACHE", "npm_config_cache", "GOPATH", "GOCACHE", "GOMODCACHE",
}

// process is a stdio server in its own session and process group, inside
// the sandbox.
type process struct {
	cmd    *sandbox.Cmd
	stderr *ring

	exitedCtx context.Context // done when the process has exited
	markExit  context.CancelFunc
	mu        sync.Mutex
	waitErr   error
}

func startProcess(s Server, opts Options) (*process, *sdk.IOTransport, error) {
	p := &process{stderr: newRing(stderrKeep)}
	// The author wrote the server's command: it keeps the user's write
	// access; its stdin and stdout are the pipes hitl speaks MCP on.
	p.cmd = opts.Sandbox.Command(context.Background(), sandbox.Spec{
		Path: s.Command, Args: s.Args, Dir: s.WorkingDir, Env: environ(opts.Environ, s.Env),
		Stderr: p.stderr, Class: sandbox.ClassMCP, Grace: opts.grace(),
	})
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, nil, err
	}
	p.exitedCtx, p.markExit = context.WithCancel(context.Background())
	go func() {
		err := p.cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		p.markExit()
	}()
	return p, &sdk.IOTransport{Reader: stdout, Writer: stdin}, nil
}

// stderrKeep bounds the stderr kept of a server.
const stderrKeep = 64 << 10

func environ(base []string, extra map[string]string) []string {
	if base == nil {
		for _, k := range SafeEnviron {
			if v, ok := os.LookupEnv(k); ok {
				base = append(base, k+"="+v)
			}
		}
	}
	env := append([]string(nil), base...)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

func (p *process) hasExited() bool { return p.exitedCtx.Err() != nil }

// exitError says how the process ended.
func (p *process) exitError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waitErr == nil {
		return errors.New("the server exited (status 0)")
	}
	if _, _, ok := sandbox.Status(p.waitErr); ok {
		return fmt.Errorf("the server exited (%s)", sandbox.Describe(p.waitErr))
	}
	return fmt.Errorf("the server exited: %w", p.waitErr)
}

// kill sends SIGKILL to the server's group at once.
func (p *process) kill() { p.cmd.Kill() }

// stop signals the process group SIGTERM, then SIGKILL after the grace,
// and waits (bounded) until the leader is reaped and no member is left.
func (p *process) stop() error {
	p.cmd.Stop()
	select {
	case <-p.exitedCtx.Done():
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("process group %d did not exit after SIGKILL", p.cmd.Pid())
	}
}

// ring keeps the last bytes written to it.
type ring struct {
	mu    sync.Mutex
	buf   []byte
	limit int
	lost  bool
}

func newRing(limit int) *ring { return &ring{limit: limit} }

func (r *ring) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(b)
	if len(b) >= r.limit {
		b = b[len(b)-r.limit:]
		r.buf = r.buf[:0]
		r.lost = true
	}
	if over := len(r.buf) + len(b) - r.limit; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
		r.lost = true
	}
	r.buf = append(r.buf, b...)
	return n, nil
}

// Tail returns the last n lines, escaped for a terminal and each at most a
// few hundred characters.
func (r *ring) Tail(n int) string {
	r.mu.Lock()
	text := string(r.buf)
	lost := r.lost
	r.mu.Unlock()
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > n || (lost && len(lines) > 0) {
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		} else {
			lines = lines[1:] // the first may be cut
		}
	}
	for i, l := range lines {
		l, _ = termtext.Shorten(strings.TrimSuffix(l, "\r"), 300)
		lines[i] = "  " + termtext.Line(l)
	}
	return strings.Join(lines, "\n")
}

// remoteTransport is the streamable HTTP or SSE transport of a remote server.
func remoteTransport(s Server, opts Options, order *fieldOrder) (sdk.Transport, error) {
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q: expected an absolute http(s) URL", s.URL)
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	c := *client
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if len(s.Headers) > 0 {
		base = &headerTransport{base: base, headers: s.Headers}
	}
	c.Transport = &boundedTransport{base: &orderTransport{base: base, order: order}}
	client = &c
	switch s.Transport {
	case "", TransportStreamable:
		return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: client}, nil
	case TransportSSE:
		return &sdk.SSEClientTransport{Endpoint: s.URL, HTTPClient: client}, nil
	}
	return nil, fmt.Errorf("transport %q: expected streamable or sse", s.Transport)
}

// boundedTransport bounds a response that is one message (JSON) at
// MaxMessage; an event stream is bounded per event by the SDK.
type boundedTransport struct{ base http.RoundTripper }

func (t *boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
		return resp, err
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: MaxMessage + 1}
	return resp, nil
}

// errTooLarge ends a response past MaxMessage.
var errTooLarge = fmt.Errorf("the server's response is larger than %d MiB", MaxMessage>>20)

type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left <= 0 {
		// One byte past MaxMessage: the message is too large.
		return 0, errTooLarge
	}
	return n, err
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
