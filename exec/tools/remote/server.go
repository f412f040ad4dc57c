package remote

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// maxCallback bounds the body of a callback.
const maxCallback = 4 << 20

// queuedChoices bounds the user_choice messages waiting to be asked for one
// call; more get 429.
const queuedChoices = 8

// Server is the callback server shared by the remote toolsets of a run. It
// listens only once a call needs it, on an ephemeral port of each callback
// host in use, under a path holding a random token.
type Server struct {
	mu        sync.Mutex
	token     string
	listeners map[string]*listener // by callback host
	pending   map[string]*pending  // by the model's call id
	closed    bool
}

type listener struct {
	srv  *http.Server
	base string // http://host:port/hitl/TOKEN
}

// outcome ends a pending call: a tool_result's text, or an error for the
// model.
type outcome struct {
	text    string
	isError bool
}

// pending is a call waiting for its tool_result.
type pending struct {
	tool    *Tool
	groupID string
	id      string
	callID  string
	done    chan outcome    // buffered 1: sent once, by whoever unregisters
	choices chan UserChoice // user_choice messages to ask, in order
}

// NewServer returns a callback server; nothing listens until a call needs
// it.
func NewServer() *Server {
	return &Server{listeners: map[string]*listener{}, pending: map[string]*pending{}}
}

// callbackURL returns the callback URL on host, starting its listener on
// first use. host may carry a port (host:port); otherwise the port is
// ephemeral.
func (s *Server) callbackURL(host string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errors.New("the callback server is closed")
	}
	if l, ok := s.listeners[host]; ok {
		return l.base, nil
	}
	if s.token == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("callback token: %w", err)
		}
		s.token = hex.EncodeToString(b[:])
	}
	addr := host
	if _, _, err := net.SplitHostPort(host); err != nil {
		addr = net.JoinHostPort(host, "0")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("callback server: cannot listen on %s: %w", addr, err)
	}
	hostOnly, _, _ := net.SplitHostPort(addr)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	l := &listener{
		srv:  &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute},
		base: "http://" + net.JoinHostPort(hostOnly, port) + "/hitl/" + s.token,
	}
	s.listeners[host] = l
	go func() { _ = l.srv.Serve(ln) }()
	return l.base, nil
}

// Close stops listening. Calls still pending end by their timeout or
// context.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	for _, l := range s.listeners {
		errs = append(errs, l.srv.Close())
	}
	s.listeners = map[string]*listener{}
	return errors.Join(errs...)
}

func (s *Server) register(p *pending) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.pending[p.id]; dup {
		return fmt.Errorf("a call with id %q is already pending", p.id)
	}
	s.pending[p.id] = p
	return nil
}

func (s *Server) unregister(p *pending) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[p.id] == p {
		delete(s.pending, p.id)
	}
}

// ServeHTTP takes the callbacks: tool_result and user_choice.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	path := "/hitl/" + s.token
	s.mu.Unlock()
	if subtle.ConstantTimeCompare([]byte(r.URL.Path), []byte(path)) != 1 {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "callbacks are POSTed"})
		return
	}
	status, err := s.callback(r)
	if err != nil {
		body := map[string]string{"error": err.Msg}
		if err.Rule != "" {
			body["rule"] = err.Rule
		}
		writeJSON(w, err.Status, body)
		return
	}
	writeJSON(w, status, map[string]bool{"ok": true})
}

func (s *Server) callback(r *http.Request) (int, *ruleError) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxCallback+1))
	if err != nil {
		return 0, &ruleError{Status: http.StatusBadRequest, Msg: "cannot read the body: " + err.Error()}
	}
	if len(data) > maxCallback {
		return 0, &ruleError{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("the body is larger than %d bytes", maxCallback)}
	}
	var c callback
	if err := json.Unmarshal(data, &c); err != nil {
		return 0, &ruleError{Status: http.StatusBadRequest, Msg: "the body is not a valid callback message: " + err.Error(), Rule: "a callback is a JSON object"}
	}
	if c.Type != "tool_result" && c.Type != "user_choice" {
		return 0, &ruleError{Status: http.StatusBadRequest, Msg: fmt.Sprintf("unknown type %q", c.Type), Rule: `type MUST be "tool_result" or "user_choice"`}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, rerr := s.lookup(&c)
	if rerr != nil {
		return 0, rerr
	}
	if c.Type == "tool_result" {
		if c.Text == nil {
			return 0, &ruleError{Status: 422, Msg: "tool_result: text is missing", Rule: "text is required: the tool result for the model"}
		}
		delete(s.pending, p.id)
		p.done <- outcome{text: *c.Text}
		return http.StatusOK, nil
	}
	if p.callID != "" && (c.CallID == nil || *c.CallID != p.callID) {
		return 0, &ruleError{Status: 422, Msg: "user_choice: call_id does not echo the invocation's call_id", Rule: "if the original invocation included a call_id, it MUST be echoed"}
	}
	choice, rerr := checkUserChoice(&c)
	if rerr != nil {
		return 0, rerr
	}
	u, _ := url.Parse(choice.ResponseURL)
	if !responseAllowed(u, p.tool.url, p.tool.allowHosts) {
		msg := fmt.Sprintf("user_choice: response_url host %q is not loopback, not the tool server's host and not in allow_response_hosts; the call has ended", u.Hostname())
		delete(s.pending, p.id)
		p.done <- outcome{isError: true, text: fmt.Sprintf(
			"remote tool %s asked the user a question whose response_url (%s) is not allowed: its host is not loopback, not the host of the tool server's url and not in the toolset's allow_response_hosts. Nothing was asked or sent.",
			p.tool.name, shownURL(u))}
		return 0, &ruleError{Status: http.StatusForbidden, Msg: msg, Rule: "response_url SHOULD use localhost or an internal network address"}
	}
	select {
	case p.choices <- choice:
		return http.StatusAccepted, nil
	default:
		return 0, &ruleError{Status: http.StatusTooManyRequests, Msg: fmt.Sprintf("more than %d user_choice messages are waiting for this call", queuedChoices)}
	}
}

// lookup finds the pending call a callback is for; s.mu is held.
func (s *Server) lookup(c *callback) (*pending, *ruleError) {
	if c.ID == nil || *c.ID == "" {
		return nil, &ruleError{Status: 422, Msg: c.Type + ": id is missing", Rule: "id MUST match the id from the original invocation"}
	}
	p, ok := s.pending[*c.ID]
	if !ok {
		return nil, &ruleError{Status: http.StatusNotFound, Msg: fmt.Sprintf("%s: no pending call has id %q (it never existed, or it has ended)", c.Type, *c.ID), Rule: "id MUST match the id from the original invocation"}
	}
	if c.GroupID == nil || *c.GroupID != p.groupID {
		return nil, &ruleError{Status: 422, Msg: c.Type + ": group_id does not match the invocation's group_id", Rule: "group_id MUST match the group_id from the original invocation"}
	}
	// A tool_result need not carry call_id (seed 000 gives it none), but a
	// different one is a message meant for another invocation.
	if c.Type == "tool_result" && c.CallID != nil && *c.CallID != p.callID {
		return nil, &ruleError{Status: 422, Msg: "tool_result: call_id does not match the invocation's call_id", Rule: "call_id, when given, MUST echo the invocation's call_id"}
	}
	return p, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
