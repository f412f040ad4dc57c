// Package remote is a model that runs in hitl-ext, hitl's companion
// program (package ext): Gemini, whose SDK hitl does not link. Each turn is
// sent to hitl-ext, whose SDK's HTTP requests come back here and go out
// through the model's own HTTP client (cassette, body bounds, idle timeout,
// same-origin rule), so a remote model is reached exactly as an in-process
// one would be; only the SDK's code runs elsewhere.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/ext"
	"github.com/hitl-dev/hitl/exec/model/cassette"
	"github.com/hitl-dev/hitl/exec/model/internal/provider"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/internal/termtext"
)

// Model is a model hitl-ext runs.
type Model struct {
	cfg     provider.Config
	name    string // the provider's name in errors ("google")
	path    string // hitl-ext
	sandbox func() *sandbox.Sandbox

	turnMu sync.Mutex  // one turn at a time
	client *ext.Client // under turnMu

	mu       sync.Mutex
	ctx      context.Context // the turn's, for its requests
	turn     int             // the turn's number, for its requests' errors
	inflight map[reqKey]context.CancelFunc
	tunnel   error // the first error a request of this turn met here
	origin   string
}

// reqKey is a request of the tunnel: its id, on the hitl-ext that asked.
type reqKey struct {
	c  *ext.Client
	id uint32
}

// MaxRequests bounds the tunnel's requests at once (the SDK sends one at
// a time): a hitl-ext that asks for more is killed.
const MaxRequests = 4

// New is the model c describes, run by the hitl-ext at path (started at
// its first turn, in the sandbox sb returns; nil: none). name labels the
// provider's errors.
func New(name string, c provider.Config, path string, sb func() *sandbox.Sandbox) *Model {
	return &Model{cfg: c, name: name, path: path, sandbox: sb, inflight: map[reqKey]context.CancelFunc{}, origin: originOf(c.BaseURL)}
}

// originOf is a URL's scheme and host ("" when it has none).
func originOf(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// Silence is how long hitl-ext may send nothing while a turn waits: more
// than a model server may be silent (the idle timeout) plus the longest
// Retry-After honoured. Past it, hitl-ext is stopped and the turn fails.
var Silence = 7 * time.Minute

// Turn sends the conversation to hitl-ext and returns its turn.
func (m *Model) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	m.turnMu.Lock()
	defer m.turnMu.Unlock()
	if err := m.start(); err != nil {
		return exec.Turn{}, err
	}
	m.mu.Lock()
	m.ctx, m.tunnel = ctx, nil
	m.turn++
	m.mu.Unlock()
	defer func() {
		// The turn's requests end with it, whatever hitl-ext did.
		m.mu.Lock()
		m.ctx = nil
		for id, cancel := range m.inflight {
			cancel()
			delete(m.inflight, id)
		}
		m.mu.Unlock()
	}()
	f, err := m.client.Call(ctx, ext.TTurn, turnRequest(req))
	if err != nil {
		if ctx.Err() != nil {
			return exec.Turn{}, ctx.Err()
		}
		return exec.Turn{}, fmt.Errorf("%s: %w", m.name, err)
	}
	var res ext.TurnResult
	if err := json.Unmarshal(f.Data, &res); err != nil {
		return exec.Turn{}, fmt.Errorf("%s: %s's answer: %w", m.name, ext.Program, err)
	}
	if res.Error != nil {
		return exec.Turn{}, m.errorOf(ctx, res.Error)
	}
	var t exec.Turn
	if err := json.Unmarshal(res.Turn, &t); err != nil {
		return exec.Turn{}, fmt.Errorf("%s: %s's turn: %w", m.name, ext.Program, err)
	}
	return t, nil
}

// Close ends hitl-ext, if it started (its exit and resources are then
// the run's, accounted to hitl).
func (m *Model) Close() error {
	m.turnMu.Lock()
	defer m.turnMu.Unlock()
	if m.client != nil {
		m.client.Close()
		m.client = nil
	}
	return nil
}

// request is exec.Request on the wire.
type request struct {
	System   string             `json:"system,omitempty"`
	Messages []exec.Message     `json:"messages"`
	Tools    []exec.ToolSpec    `json:"tools,omitempty"`
	Output   *exec.OutputFormat `json:"output,omitempty"`
}

func turnRequest(r exec.Request) request {
	return request{System: r.System, Messages: r.Messages, Tools: r.Tools, Output: r.Output}
}

// start starts hitl-ext, again if it ended, and opens the model.
func (m *Model) start() error {
	if m.client != nil && !m.client.Dead() {
		return nil
	}
	var sb *sandbox.Sandbox
	if m.sandbox != nil {
		sb = m.sandbox()
	}
	if sb == nil {
		var err error
		if sb, err = sandbox.New(sandbox.Off, ""); err != nil {
			return err
		}
	}
	// The frames of this hitl-ext are answered on it, never on a later
	// one (a request's late body cannot reach the next hitl-ext).
	var cur atomic.Pointer[ext.Client]
	c, err := ext.Start(sb, m.path, func(f ext.Frame) {
		if c := cur.Load(); c != nil {
			m.frame(c, f)
		}
	})
	if err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	c.SetSilence(Silence)
	cur.Store(c)
	mc := *m.cfg.Model
	mc.Alloy, mc.Fallback, mc.Routing, mc.Script = nil, nil, nil, nil
	model, err := json.Marshal(&mc)
	if err != nil {
		c.Close()
		return err
	}
	err = c.SendJSON(ext.TOpenModel, 0, ext.ModelConfig{
		Provider: m.name, Model: model, APIKey: m.cfg.APIKey, BaseURL: m.cfg.BaseURL,
		MaxRetries: m.cfg.MaxRetries, MaxRetryDelay: int64(m.cfg.MaxRetryDelay), TurnRetryDelay: int64(m.cfg.TurnRetryDelay),
		MaxTurnBytes: m.cfg.MaxTurnBytes,
	})
	if err != nil {
		c.Close()
		return fmt.Errorf("%s: %s: %w", m.name, ext.Program, err)
	}
	m.client = c
	return nil
}

// frame handles what hitl-ext c sends besides its answers: the tunnel's
// requests and the stream's deltas. It runs on c's reading goroutine, so
// it never writes to c itself (c may be blocked writing to hitl).
func (m *Model) frame(c *ext.Client, f ext.Frame) {
	switch f.Type {
	case ext.TDelta:
		m.cfg.Delta()
	case ext.THTTP:
		var r ext.HTTPRequest
		if err := json.Unmarshal(f.Data, &r); err != nil {
			c.Abort(fmt.Sprintf("it sent a request hitl cannot read (%v), and was killed", err))
			return
		}
		// hitl-ext reaches only the model's base URL: its sandbox has no
		// network, and this is the only way out.
		if o := originOf(r.URL); o == "" || o != m.origin {
			c.Abort(fmt.Sprintf("it asked for a request to %s, outside the model's base URL %s, and was killed", termtext.Line(r.URL), m.cfg.BaseURL))
			return
		}
		m.mu.Lock()
		ctx, turn := m.ctx, m.turn
		if ctx == nil {
			m.mu.Unlock()
			c.Go(func() { _ = c.SendJSON(ext.THead, f.ID, ext.HTTPHead{Error: "no turn is running"}) })
			return
		}
		key := reqKey{c, f.ID}
		if _, dup := m.inflight[key]; dup || len(m.inflight) >= MaxRequests {
			m.mu.Unlock()
			c.Abort(fmt.Sprintf("it asked for more than %d requests at once, or one id twice, and was killed", MaxRequests))
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		m.inflight[key] = cancel
		m.mu.Unlock()
		go m.send(ctx, c, f.ID, turn, r)
	case ext.THTTPCancel:
		m.mu.Lock()
		if cancel := m.inflight[reqKey{c, f.ID}]; cancel != nil {
			cancel()
		}
		m.mu.Unlock()
	}
}

func (m *Model) fail(c *ext.Client, id uint32, turn int, err error) {
	m.record(turn, err)
	_ = c.SendJSON(ext.THead, id, ext.HTTPHead{Error: err.Error(), Cut: provider.IsCut(err)})
}

// record keeps err as the turn's tunnel error, if it is the turn's first
// and the turn is still the one running.
func (m *Model) record(turn int, err error) {
	m.mu.Lock()
	if m.tunnel == nil && turn == m.turn && m.ctx != nil {
		m.tunnel = err
	}
	m.mu.Unlock()
}

// hopHeaders are what hitl's client sets itself, whatever their case in
// hitl-ext's map (a second Host or length would go out verbatim).
var hopHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Trailer": true,
	"Upgrade": true, "Te": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authorization": true, "Proxy-Authenticate": true,
}

// header is a tunnel request's header, its names canonical, without the
// ones hitl's client owns.
func header(in map[string][]string) http.Header {
	h := http.Header{}
	for k, vs := range in {
		ck := http.CanonicalHeaderKey(k)
		if hopHeaders[ck] {
			continue
		}
		for _, v := range vs {
			h.Add(ck, v)
		}
	}
	return h
}

// send sends one request of the tunnel through the model's client and
// streams its response back.
func (m *Model) send(ctx context.Context, c *ext.Client, id uint32, turn int, r ext.HTTPRequest) {
	defer func() {
		m.mu.Lock()
		if cancel := m.inflight[reqKey{c, id}]; cancel != nil {
			cancel()
			delete(m.inflight, reqKey{c, id})
		}
		m.mu.Unlock()
	}()
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		m.fail(c, id, turn, err)
		return
	}
	req.Header = header(r.Header)
	resp, err := m.cfg.HTTPClient.Do(req)
	if err != nil {
		// hitl-ext's client names the request itself.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		m.fail(c, id, turn, err)
		return
	}
	defer resp.Body.Close()
	if err := c.SendJSON(ext.THead, id, ext.HTTPHead{Status: resp.StatusCode, Header: resp.Header}); err != nil {
		return
	}
	buf := make([]byte, ext.ChunkSize)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if c.Send(ext.TBody, id, buf[:n]) != nil {
				return
			}
			c.Touch() // the stream flows: hitl-ext is waiting on it, not wedged
		}
		if err == io.EOF {
			_ = c.SendJSON(ext.TBodyEnd, id, ext.BodyEnd{})
			return
		}
		if err != nil {
			m.record(turn, err)
			_ = c.SendJSON(ext.TBodyEnd, id, ext.BodyEnd{Error: err.Error(), Cut: provider.IsCut(err)})
			return
		}
	}
}

// errorOf is the error hitl-ext reported, as the in-process provider
// would have returned it: what this side's client met (a cassette miss, a
// bound, the turn's end) as it was, else the kind hitl-ext named.
func (m *Model) errorOf(ctx context.Context, e *ext.Error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	m.mu.Lock()
	tunnel := m.tunnel
	m.mu.Unlock()
	if e.Tunnel && tunnel != nil {
		var miss *cassette.MissError
		if errors.As(tunnel, &miss) {
			return miss
		}
		if tl, ok := provider.AsTooLarge(tunnel, m.name); ok {
			return tl
		}
	} else {
		tunnel = nil
	}
	err := m.typed(e, tunnel)
	if err.Error() != e.Message {
		// What wrapped it there (a turn's retries) is in the text.
		return &carried{msg: e.Message, cause: err}
	}
	return err
}

// typed is the error of the kind e names.
func (m *Model) typed(e *ext.Error, tunnel error) error {
	switch e.Kind {
	case "api":
		return &provider.APIError{Provider: e.Provider, Status: e.Status, Type: e.Type, Message: e.Detail, Retries: e.Retries}
	case "stream":
		return &provider.StreamError{Provider: e.Provider, Err: &carried{msg: e.Detail, cause: tunnel}, Cut: e.Cut}
	case "too_large":
		return &provider.TooLargeError{Provider: e.Provider, What: e.What, Limit: e.Limit, Reached: e.Reached}
	case "cancelled":
		return context.Canceled
	}
	return &carried{msg: e.Message, cause: tunnel}
}

// carried is an error's text as hitl-ext gave it, over the error this
// side's client met, if it was one of the causes (a stalled stream, a
// dropped connection): errors.As finds it as it would in process.
type carried struct {
	msg   string
	cause error
}

func (e *carried) Error() string { return e.msg }
func (e *carried) Unwrap() error { return e.cause }
