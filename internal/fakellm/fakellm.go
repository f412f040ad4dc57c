// Package fakellm is a local HTTP server speaking the wire formats of the
// OpenAI Chat Completions and Anthropic Messages streaming APIs, for tests:
// each request gets the next scripted Reply.
package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"unicode/utf8"
)

// Call is a tool call of a reply. Args are the argument chunks, sent one
// delta each (joined, they are the JSON arguments).
type Call struct {
	ID   string   `json:"id"`
	Name string   `json:"name"`
	Args []string `json:"args"`
	// Namespace is the tool namespace of a Responses API call (Codex
	// offers an MCP server's tools as the namespace mcp__SERVER).
	Namespace string `json:"namespace,omitempty"`
}

// Thinking is an Anthropic thinking block (Redacted: a redacted one).
type Thinking struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
}

// Reply is what the server answers to one request.
type Reply struct {
	// Status, when not 0 or 200, makes the reply an error: Body (or a
	// provider-shaped error carrying Message) with Header.
	Status  int               `json:"status,omitempty"`
	Message string            `json:"message,omitempty"`
	Body    string            `json:"body,omitempty"`
	Header  map[string]string `json:"header,omitempty"`

	// A streamed turn.
	Text      []string   `json:"text,omitempty"` // text chunks
	Calls     []Call     `json:"calls,omitempty"`
	Thinking  []Thinking `json:"thinking,omitempty"`
	InTokens  int64      `json:"in_tokens,omitempty"`
	OutTokens int64      `json:"out_tokens,omitempty"`
	// CutAfter > 0 drops the connection after that many SSE events.
	CutAfter int `json:"cut_after,omitempty"`
	// Raw, when set, is sent as the whole event-stream body.
	Raw string `json:"raw,omitempty"`
	// Forever streams without end, until the client goes away: "text"
	// sends 64 KiB text deltas, "line" one data line that never ends.
	Forever string `json:"forever,omitempty"`

	// Repeat keeps answering with this reply.
	Repeat bool `json:"repeat,omitempty"`
}

// Request is a request the server received.
type Request struct {
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Header http.Header `json:"header"`
	Body   string      `json:"body"`
}

// Format is the wire format a Server speaks.
type Format int

const (
	OpenAI Format = iota
	Anthropic
)

// Server is a fake model API.
type Server struct {
	*httptest.Server
	Format Format

	// Choose, when set, answers first: a reply for the request, or false
	// to take the next scripted one.
	Choose func(Request) (Reply, bool)

	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// New starts a server speaking format with the scripted replies.
func New(format Format, replies ...Reply) *Server {
	s := &Server{Format: format, replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

func (s *Server) next(r *http.Request) (Reply, bool) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: string(body)}
	s.requests = append(s.requests, req)
	if s.Choose != nil {
		if rep, ok := s.Choose(req); ok {
			return rep, true
		}
	}
	if len(s.replies) == 0 {
		return Reply{}, false
	}
	rep := s.replies[0]
	if !rep.Repeat {
		s.replies = s.replies[1:]
	}
	return rep, true
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/embeddings") {
		s.embeddings(w, r)
		return
	}
	format := s.formatOf(r)
	rep, ok := s.next(r)
	if !ok {
		rep = Reply{Status: http.StatusInternalServerError, Message: "fakellm: no reply left", Header: map[string]string{"x-should-retry": "false"}}
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		body := rep.Body
		if body == "" {
			body = errorBody(format, rep.Status, rep.Message)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		io.WriteString(w, body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if rep.Raw != "" {
		io.WriteString(w, rep.Raw)
		return
	}
	if rep.Forever != "" {
		s.forever(w, r, format, rep.Forever)
		return
	}
	events := Events(format, rep)
	for i, ev := range events {
		if rep.CutAfter > 0 && i == rep.CutAfter {
			if fl != nil {
				fl.Flush()
			}
			panic(http.ErrAbortHandler) // drop the connection mid-stream
		}
		io.WriteString(w, ev)
		if fl != nil {
			fl.Flush()
		}
	}
}

// forever streams the start of a text turn, then (kind "text") text deltas
// or (kind "line") the bytes of one line, until the client goes away.
func (s *Server) forever(w http.ResponseWriter, r *http.Request, format Format, kind string) {
	chunk := strings.Repeat("x", 64<<10)
	head, next, line := foreverParts(format, chunk)
	if kind == "line" {
		next = chunk
		head += line
	}
	fl, _ := w.(http.Flusher)
	if _, err := io.WriteString(w, head); err != nil {
		return
	}
	for r.Context().Err() == nil {
		if _, err := io.WriteString(w, next); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

func errorBody(format Format, status int, msg string) string {
	if msg == "" {
		msg = http.StatusText(status)
	}
	if format == Gemini {
		return geminiError(status, msg)
	}
	if format == Anthropic {
		typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 429: "rate_limit_error", 529: "overloaded_error"}[status]
		if typ == "" {
			typ = "api_error"
		}
		return js(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
	}
	code := map[int]string{401: "invalid_api_key", 429: "rate_limit_exceeded"}[status]
	return js(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": code}})
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// OpenAIEvents is rep as chat.completion.chunk SSE lines, ending with
// data: [DONE].
func OpenAIEvents(rep Reply) []string {
	var out []string
	chunk := func(choices []any, usage any) {
		c := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": "fake", "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		out = append(out, "data: "+js(c)+"\n\n")
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}
	}
	chunk(choice(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	for _, t := range rep.Text {
		chunk(choice(map[string]any{"content": t}, nil), nil)
	}
	for i, c := range rep.Calls {
		chunk(choice(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil), nil)
		for _, a := range c.Args {
			chunk(choice(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": a}}}}, nil), nil)
		}
	}
	finish := "stop"
	if len(rep.Calls) > 0 {
		finish = "tool_calls"
	}
	chunk(choice(map[string]any{}, finish), nil)
	chunk([]any{}, map[string]any{"prompt_tokens": rep.InTokens, "completion_tokens": rep.OutTokens, "total_tokens": rep.InTokens + rep.OutTokens})
	out = append(out, "data: [DONE]\n\n")
	return out
}

// AnthropicEvents is rep as Messages API SSE events: message_start,
// content blocks (thinking, text, tool_use) with their deltas, message_delta
// with the usage, message_stop.
func AnthropicEvents(rep Reply) []string {
	var out []string
	ev := func(typ string, data map[string]any) {
		data["type"] = typ
		out = append(out, fmt.Sprintf("event: %s\ndata: %s\n\n", typ, js(data)))
	}
	ev("message_start", map[string]any{"message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "content": []any{}, "model": "fake",
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": rep.InTokens, "output_tokens": 1},
	}})
	out = append(out, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
	idx := 0
	for _, t := range rep.Thinking {
		if t.Redacted != "" {
			ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "redacted_thinking", "data": t.Redacted}})
		} else {
			ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, part := range splitHalf(t.Text) {
				ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "thinking_delta", "thinking": part}})
			}
			ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "signature_delta", "signature": t.Signature}})
		}
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	if len(rep.Text) > 0 {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, t := range rep.Text {
			ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": t}})
		}
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	for _, c := range rep.Calls {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, a := range c.Args {
			ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": a}})
		}
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	stop := "end_turn"
	if len(rep.Calls) > 0 {
		stop = "tool_use"
	}
	ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": rep.OutTokens}})
	ev("message_stop", map[string]any{})
	return out
}

func splitHalf(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	h := len(s) / 2
	for h < len(s) && !utf8.RuneStart(s[h]) {
		h++
	}
	return []string{s[:h], s[h:]}
}
