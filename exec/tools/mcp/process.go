package mcp

import (
	"context"
	"errors"
	"fmt"
	"github.com/hitl-dev/hitl/internal/procgroup"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

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

// process is a stdio server in its own process group.
type process struct {
	cmd    *exec.Cmd
	stderr *ring

	exitedCtx context.Context // done when the process has exited
	markExit  context.CancelFunc
	mu        sync.Mutex
	waitErr   error
}

func startProcess(s Server, opts Options) (*process, sdk.Transport, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.WorkingDir
	cmd.Env = environ(opts.Environ, s.Env)
	cmd.SysProcAttr = procAttr()
	p := &process{cmd: cmd, stderr: newRing(stderrKeep)}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	p.exitedCtx, p.markExit = context.WithCancel(context.Background())
	go func() {
		err := cmd.Wait()
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
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		return errors.New("the server exited (status 0)")
	case errors.As(p.waitErr, &ee):
		return fmt.Errorf("the server exited (%v)", ee.ProcessState)
	default:
		return fmt.Errorf("the server exited: %w", p.waitErr)
	}
}

// pgid is the server's process group (its pid).
func (p *process) pgid() int { return p.cmd.Process.Pid }

// stop signals the process group SIGTERM, then SIGKILL after grace, and
// waits for the leader to be reaped. Members that ignore SIGTERM and outlive
// the leader are killed too.
func (p *process) stop(grace time.Duration) error {
	pg := p.pgid()
	if !p.hasExited() {
		_ = syscall.Kill(-pg, syscall.SIGTERM)
		select {
		case <-p.exitedCtx.Done():
		case <-time.After(grace):
		}
	}
	// Whatever is left of the group (the leader, or children that
	// survived it) is killed.
	_ = syscall.Kill(-pg, syscall.SIGKILL)
	select {
	case <-p.exitedCtx.Done():
	case <-time.After(5 * time.Second):
		return fmt.Errorf("process group %d did not exit after SIGKILL", pg)
	}
	// SIGKILL is delivered, not yet acted on: wait for the members.
	for end := time.Now().Add(time.Second); procgroup.Alive(pg); {
		if time.Now().After(end) {
			return fmt.Errorf("process group %d still has processes after SIGKILL", pg)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
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
func remoteTransport(s Server, opts Options) (sdk.Transport, error) {
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
	c.Transport = &boundedTransport{base: base}
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
