// Package serve is hitl-ext's side of a remote model (package remote): it
// runs the provider's SDK with an HTTP client whose every request is sent
// to hitl over the wire (a tunnel), and answers each turn with the turn or
// the error, described so that hitl returns the same error types.
package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/ext"
	"github.com/hitl-dev/hitl/exec/model/gemini"
	"github.com/hitl-dev/hitl/exec/model/internal/provider"
)

// Model is the model hitl opened.
type Model struct {
	conn  *ext.Conn
	model exec.Model

	mu      sync.Mutex
	turns   map[uint32]context.CancelFunc
	pending map[uint32]*pending // tunnel requests by id
	nextID  uint32
}

// pending is a tunnel request waiting for its response, then its body.
type pending struct {
	head chan ext.HTTPHead
	body *io.PipeWriter
}

// Open opens the model cfg describes.
func Open(conn *ext.Conn, cfg ext.ModelConfig) (*Model, error) {
	var cm config.Model
	if err := json.Unmarshal(cfg.Model, &cm); err != nil {
		return nil, fmt.Errorf("the model's configuration: %w", err)
	}
	s := &Model{conn: conn, turns: map[uint32]context.CancelFunc{}, pending: map[uint32]*pending{}}
	c := provider.Config{
		Model: &cm, APIKey: cfg.APIKey, BaseURL: cfg.BaseURL,
		HTTPClient:     &http.Client{Transport: s},
		MaxRetries:     cfg.MaxRetries,
		MaxRetryDelay:  time.Duration(cfg.MaxRetryDelay),
		TurnRetryDelay: time.Duration(cfg.TurnRetryDelay),
		MaxTurnBytes:   cfg.MaxTurnBytes,
		OnDelta:        func() { _ = conn.Send(ext.TDelta, 0, nil) },
	}
	switch cfg.Provider {
	case gemini.Name:
		m, err := gemini.New(c)
		if err != nil {
			return nil, err
		}
		s.model = m
	default:
		return nil, fmt.Errorf("no provider %q here", cfg.Provider)
	}
	return s, nil
}

// Frame handles one frame hitl sent for the model; it does not block.
func (s *Model) Frame(f ext.Frame) {
	switch f.Type {
	case ext.TTurn:
		var req struct {
			System   string             `json:"system"`
			Messages []exec.Message     `json:"messages"`
			Tools    []exec.ToolSpec    `json:"tools"`
			Output   *exec.OutputFormat `json:"output"`
		}
		if err := json.Unmarshal(f.Data, &req); err != nil {
			s.answer(f.ID, exec.Turn{}, fmt.Errorf("the turn hitl sent: %w", err))
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.mu.Lock()
		s.turns[f.ID] = cancel
		s.mu.Unlock()
		go func() {
			t, err := s.model.Turn(ctx, exec.Request{System: req.System, Messages: req.Messages, Tools: req.Tools, Output: req.Output})
			s.mu.Lock()
			delete(s.turns, f.ID)
			s.mu.Unlock()
			cancel()
			s.answer(f.ID, t, err)
		}()
	case ext.TCancel:
		s.mu.Lock()
		if cancel := s.turns[f.ID]; cancel != nil {
			cancel()
		}
		s.mu.Unlock()
	case ext.THead:
		var h ext.HTTPHead
		if err := json.Unmarshal(f.Data, &h); err != nil {
			h = ext.HTTPHead{Error: "hitl's response: " + err.Error()}
		}
		s.mu.Lock()
		p := s.pending[f.ID]
		s.mu.Unlock()
		if p != nil {
			select {
			case p.head <- h:
			default:
			}
		}
	case ext.TBody, ext.TBodyEnd:
		s.mu.Lock()
		p := s.pending[f.ID]
		if p != nil && f.Type == ext.TBodyEnd {
			delete(s.pending, f.ID)
		}
		s.mu.Unlock()
		if p == nil {
			return
		}
		if f.Type == ext.TBody {
			// Blocks until the SDK reads it (or closes the body): the
			// body flows at the pace it is read.
			_, _ = p.body.Write(f.Data)
			return
		}
		var end ext.BodyEnd
		_ = json.Unmarshal(f.Data, &end)
		if end.Error != "" {
			p.body.CloseWithError(&tunnelError{msg: end.Error, cut: end.Cut})
		} else {
			p.body.Close()
		}
	}
}

// RoundTrip sends req to hitl, which sends it.
func (s *Model) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	pr, pw := io.Pipe()
	p := &pending{head: make(chan ext.HTTPHead, 1), body: pw}
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.pending[id] = p
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}
	if err := s.conn.SendJSON(ext.THTTP, id, ext.HTTPRequest{Method: req.Method, URL: req.URL.String(), Header: req.Header, Body: body}); err != nil {
		forget()
		return nil, err
	}
	var h ext.HTTPHead
	select {
	case h = <-p.head:
	case <-req.Context().Done():
		forget()
		_ = s.conn.Send(ext.THTTPCancel, id, nil)
		return nil, req.Context().Err()
	}
	if h.Error != "" {
		forget()
		return nil, &tunnelError{msg: h.Error, cut: h.Cut}
	}
	// The request's end abandons its body on hitl's side too.
	stop := context.AfterFunc(req.Context(), func() {
		_ = s.conn.Send(ext.THTTPCancel, id, nil)
		pw.CloseWithError(req.Context().Err())
	})
	return &http.Response{
		Status: fmt.Sprintf("%d %s", h.Status, http.StatusText(h.Status)), StatusCode: h.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header(h.Header), Body: &tunnelBody{PipeReader: pr, stop: stop, cancel: func() {
			forget()
			_ = s.conn.Send(ext.THTTPCancel, id, nil)
		}},
		ContentLength: -1, Request: req,
	}, nil
}

// tunnelBody is a tunnelled body: closing it early abandons the request on
// hitl's side.
type tunnelBody struct {
	*io.PipeReader
	stop   func() bool
	cancel func()
	once   sync.Once
}

func (b *tunnelBody) Close() error {
	b.once.Do(func() {
		b.stop()
		b.cancel()
	})
	return b.PipeReader.Close()
}

// tunnelError is a request's error as hitl met it; a cut one reads as a
// premature end (provider.IsCut), so the turn is retried as it would be.
type tunnelError struct {
	msg string
	cut bool
}

func (e *tunnelError) Error() string { return e.msg }

func (e *tunnelError) Unwrap() error {
	if e.cut {
		return io.ErrUnexpectedEOF
	}
	return nil
}

func (s *Model) answer(id uint32, t exec.Turn, err error) {
	var res ext.TurnResult
	if err != nil {
		res.Error = describe(err)
	} else {
		b, merr := json.Marshal(t)
		if merr != nil {
			res.Error = describe(merr)
		} else {
			res.Turn = b
		}
	}
	_ = s.conn.SendJSON(ext.TTurnDone, id, res)
}

// describe is err on the wire.
func describe(err error) *ext.Error {
	e := &ext.Error{Message: err.Error()}
	var te *tunnelError
	e.Tunnel = errors.As(err, &te)
	var ae *provider.APIError
	var se *provider.StreamError
	var tl *provider.TooLargeError
	switch {
	case errors.As(err, &tl):
		e.Kind, e.Provider, e.What, e.Limit, e.Reached = "too_large", tl.Provider, tl.What, tl.Limit, tl.Reached
	case errors.As(err, &se) && !errors.As(se.Err, &ae):
		e.Kind, e.Provider, e.Cut = "stream", se.Provider, se.Cut
		if se.Err != nil {
			e.Detail = se.Err.Error()
		}
	case errors.As(err, &ae):
		e.Kind, e.Provider, e.Status, e.Type, e.Detail, e.Retries = "api", ae.Provider, ae.Status, ae.Type, ae.Message, ae.Retries
	case errors.Is(err, context.Canceled):
		e.Kind = "cancelled"
	}
	return e
}
