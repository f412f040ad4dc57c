package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// StreamIdleTimeout is how long a model server may stay silent, waiting for
// the response headers or between two reads of a streamed response, before
// the request is abandoned as stalled (and retried like a cut stream, within
// the bounded retries). Streaming servers send something far more often
// (Anthropic pings every few seconds); without a bound, a server that hangs
// mid-stream would hang hitl.
const StreamIdleTimeout = 5 * time.Minute

// MaxRequestDuration bounds one model request, headers to the last byte
// of its stream, however busy the server keeps the connection: a server
// that sends keep-alive pings forever never goes idle, so the idle bound
// alone would let it hold the run without end (DESIGN §1 principle 10).
var MaxRequestDuration = 30 * time.Minute

// TooLongError is a model request that ran past MaxRequestDuration. It is
// not retried: a server that streamed that long would do so again.
type TooLongError struct{ Limit time.Duration }

func (e *TooLongError) Error() string {
	return fmt.Sprintf("the model's response took longer than %s (a model turn is bounded in time); hitl stopped reading it", e.Limit)
}

// StalledError is a model request abandoned after Idle without a byte.
type StalledError struct{ Idle time.Duration }

func (e *StalledError) Error() string {
	return fmt.Sprintf("the model server sent nothing for %s", e.Idle)
}

// Timeout and Temporary make it a net.Error: a dropped connection, which
// the SDKs and the turn retry treat as such.
func (e *StalledError) Timeout() bool   { return true }
func (e *StalledError) Temporary() bool { return true }

// WithIdleTimeout returns a transport that abandons a request whose server
// sends nothing for idle: no headers, or no bytes of the body.
func WithIdleTimeout(base http.RoundTripper, idle time.Duration) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &idleTransport{base: base, idle: idle}
}

type idleTransport struct {
	base http.RoundTripper
	idle time.Duration
}

func (t *idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	stalled, tooLong := new(atomic.Bool), new(atomic.Bool)
	timer := time.AfterFunc(t.idle, func() {
		stalled.Store(true)
		cancel()
	})
	limit := MaxRequestDuration
	deadline := time.AfterFunc(limit, func() {
		tooLong.Store(true)
		cancel()
	})
	res, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		deadline.Stop()
		cancel()
		if tooLong.Load() {
			return nil, &TooLongError{Limit: limit}
		}
		if stalled.Load() {
			return nil, &StalledError{Idle: t.idle}
		}
		return nil, err
	}
	res.Body = &idleBody{body: res.Body, timer: timer, deadline: deadline, idle: t.idle, limit: limit, stalled: stalled, tooLong: tooLong, cancel: cancel}
	return res, nil
}

type idleBody struct {
	body     io.ReadCloser
	timer    *time.Timer
	deadline *time.Timer
	idle     time.Duration
	limit    time.Duration
	stalled  *atomic.Bool
	tooLong  *atomic.Bool
	cancel   context.CancelFunc
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if b.tooLong.Load() {
		return n, &TooLongError{Limit: b.limit}
	}
	if b.stalled.Load() {
		return n, &StalledError{Idle: b.idle}
	}
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	b.deadline.Stop()
	b.cancel()
	return b.body.Close()
}
