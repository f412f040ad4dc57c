// Package provider holds what the HTTP model providers (openai, anthropic)
// share: their resolved configuration, the error shape of a failed API call,
// and the whole-turn retry of a stream cut mid-way.
package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/internal/termtext"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxRetries     = 3
	DefaultMaxRetryDelay  = 60 * time.Second
	DefaultTurnRetryDelay = 500 * time.Millisecond
)

// Config is a model definition with everything resolved: the key to send (if
// any), the base URL, the shared HTTP client and the retry bounds.
type Config struct {
	Model *config.Model
	// APIKey is sent as the provider's credential; "" sends none.
	APIKey string
	// BaseURL is where requests go; never empty.
	BaseURL string
	// HTTPClient is shared across turns (keep-alive).
	HTTPClient *http.Client
	// MaxRetries bounds the SDK's retries (429, 5xx, dropped connections) and
	// the whole-turn retries of a stream cut mid-way. Negative means none
	// (replaying a cassette); zero means DefaultMaxRetries.
	MaxRetries int
	// MaxRetryDelay is the longest server-directed wait (Retry-After) that is
	// honoured; a longer one ends the call with the error at once.
	MaxRetryDelay time.Duration
	// TurnRetryDelay is the first wait before a cut stream is retried; it
	// doubles with each retry.
	TurnRetryDelay time.Duration
	// OnDelta, when set, is called as each chunk of a streamed turn arrives.
	OnDelta func()
	// MaxTurnBytes bounds the text, thinking and tool calls of one turn
	// (MaxTurn); 0 means DefaultMaxTurnBytes.
	MaxTurnBytes int64
}

// Retries is the number of retries to configure.
func (c *Config) Retries() int {
	switch {
	case c.MaxRetries < 0:
		return 0
	case c.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return c.MaxRetries
}

// RetryDelayCap is MaxRetryDelay or its default.
func (c *Config) RetryDelayCap() time.Duration {
	if c.MaxRetryDelay > 0 {
		return c.MaxRetryDelay
	}
	return DefaultMaxRetryDelay
}

// Delta reports a streamed chunk.
func (c *Config) Delta() {
	if c.OnDelta != nil {
		c.OnDelta()
	}
}

// APIError is a request the provider answered with an error status (after
// retries), carrying the provider's own message.
type APIError struct {
	Provider string // "openai", "anthropic"
	Status   int
	Type     string // the provider's error type or code, if any
	Message  string // the provider's message, if any
	Retries  int    // retries made before giving up
}

func (e *APIError) Error() string {
	var b strings.Builder
	if e.Status == 0 {
		fmt.Fprintf(&b, "%s: error event", e.Provider)
	} else {
		fmt.Fprintf(&b, "%s: %d %s", e.Provider, e.Status, http.StatusText(e.Status))
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(shown(e.Message))
	} else if e.Type != "" {
		b.WriteString(": ")
		b.WriteString(shown(e.Type))
	}
	if e.Retries > 0 {
		fmt.Fprintf(&b, " (after %d retries)", e.Retries)
	}
	return b.String()
}

// maxShown bounds the provider's message in an error, in bytes.
const maxShown = 2000

// shown is text from the server as an error may carry it to a terminal:
// control characters escaped (a gateway's error page could clear the
// screen or retitle the window), and bounded.
func shown(s string) string {
	if short, cut := termtext.Shorten(s, maxShown); cut > 0 {
		s = fmt.Sprintf("%s (%d bytes cut)", short, cut)
	}
	return termtext.Line(s)
}

// ErrIncomplete is a stream that ended before the turn did.
var ErrIncomplete = errors.New("the stream ended before the turn was complete")

// StreamError is a turn whose stream failed part-way. Cut says whether the
// failure is a dropped connection or an early end (retried as a whole turn)
// rather than a malformed stream.
type StreamError struct {
	Provider string
	Err      error
	Cut      bool
}

func (e *StreamError) Error() string {
	var ae *APIError
	if errors.As(e.Err, &ae) {
		return ae.Error()
	}
	if e.Cut {
		return fmt.Sprintf("%s: stream cut: %v", e.Provider, e.Err)
	}
	return fmt.Sprintf("%s: malformed stream: %v", e.Provider, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

// IsCut reports whether err, met while reading a response body, is a dropped
// connection or a premature end rather than bad data.
func IsCut(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, ErrIncomplete) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// RetryTurn calls attempt until it succeeds, fails with an error that is not
// a cut stream, or retries are exhausted, waiting between attempts.
func RetryTurn[T any](ctx context.Context, c *Config, attempt func() (T, error)) (T, error) {
	delay := c.TurnRetryDelay
	if delay <= 0 {
		delay = DefaultTurnRetryDelay
	}
	retries := c.Retries()
	for n := 0; ; n++ {
		t, err := attempt()
		var se *StreamError
		if err == nil || !errors.As(err, &se) || !se.Cut || n >= retries || ctx.Err() != nil {
			if err != nil && se != nil && se.Cut && n > 0 {
				err = fmt.Errorf("%w (after %d retries)", err, n)
			}
			return t, err
		}
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// RetryAfter is the server-directed wait of res (Retry-After-Ms, then
// Retry-After in seconds or as an HTTP date), if any.
func RetryAfter(res *http.Response) (time.Duration, bool) {
	if res == nil {
		return 0, false
	}
	if v := res.Header.Get("Retry-After-Ms"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return time.Duration(f * float64(time.Millisecond)), true
		}
	}
	if v := res.Header.Get("Retry-After"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return time.Duration(f * float64(time.Second)), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return time.Until(t), true
		}
	}
	return 0, false
}
