package provider

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Bounds of a model turn (DESIGN §1 principle 10, §8 "A model turn is
// bounded").
const (
	// DefaultMaxTurnBytes bounds the text, thinking and tool calls of one
	// turn, as the provider accumulates them, and the bytes of one event of
	// its stream (the bytes up to a blank line), which the SDKs' decoders
	// hold whole, line and data, before the provider sees them. (A bound on
	// the event of at most a power of two keeps their line scanner's buffer
	// from doubling past it.)
	DefaultMaxTurnBytes = 16 << 20
	// MaxErrorBody bounds the body of an error response (a gateway's error
	// page, a provider's JSON error), read whole by the SDKs.
	MaxErrorBody = 1 << 20
	// partCost is what a part of a turn (a tool call, a content block)
	// counts toward the turn bound besides its text: its bookkeeping, so a
	// stream of empty parts cannot grow memory without growing the count.
	partCost = 256
)

// TooLargeError is a response that passed a bound; hitl stopped reading it.
// It is never retried.
type TooLargeError struct {
	Provider string // "openai", "anthropic"; "" when the body limiter met it
	What     string // what passed the bound
	Limit    int64
	// Reached: it reached the bound (a stream event may hold one byte less
	// than it), rather than passed it.
	Reached bool
}

func (e *TooLargeError) Error() string {
	verb := "passed"
	if e.Reached {
		verb = "reached"
	}
	msg := fmt.Sprintf("%s %s %s: hitl stopped reading the response (a model turn is bounded)", e.What, verb, Size(e.Limit))
	if e.Provider != "" {
		return e.Provider + ": " + msg
	}
	return msg
}

// Named returns e labelled with provider, if it has no label yet.
func (e *TooLargeError) Named(provider string) *TooLargeError {
	if e.Provider != "" {
		return e
	}
	c := *e
	c.Provider = provider
	return &c
}

// AsTooLarge returns the TooLargeError in err's chain, named for provider.
func AsTooLarge(err error, provider string) (*TooLargeError, bool) {
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		return nil, false
	}
	return tl.Named(provider), true
}

// Size is n bytes for people: "16 MiB", "1536 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// MaxTurn is MaxTurnBytes or its default.
func (c *Config) MaxTurn() int64 {
	if c.MaxTurnBytes > 0 {
		return c.MaxTurnBytes
	}
	return DefaultMaxTurnBytes
}

// Budget counts what a turn has accumulated against the turn bound.
type Budget struct {
	provider string
	limit    int64
	used     int64
}

// Budget starts counting a turn.
func (c *Config) Budget(provider string) *Budget {
	return &Budget{provider: provider, limit: c.MaxTurn()}
}

// Add counts n more bytes; past the bound it returns a *TooLargeError.
func (b *Budget) Add(n int) error {
	b.used += int64(n)
	if b.used > b.limit {
		return &TooLargeError{Provider: b.provider, What: "the turn's text, thinking and tool calls", Limit: b.limit}
	}
	return nil
}

// AddPart counts a new part of the turn, a tool call or a content block
// (its bookkeeping; its text is added as it comes).
func (b *Budget) AddPart() error { return b.Add(partCost) }

// LimitBodies returns a transport that bounds what the SDKs may read of a
// response body: a 2xx body (a stream) is read less than event bytes between
// two blank lines (one SSE event: the SDKs' decoders keep a whole event, and
// a whole line, in memory); any other body is read at most errBody bytes
// (the SDKs read error bodies whole). Past a bound, Read fails with a
// *TooLargeError.
func LimitBodies(base http.RoundTripper, event, errBody int64) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &limitTransport{base: base, event: event, errBody: errBody}
}

type limitTransport struct {
	base           http.RoundTripper
	event, errBody int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	if err != nil || res.Body == nil || res.Body == http.NoBody {
		return res, err
	}
	if res.StatusCode/100 == 2 {
		res.Body = &eventLimitBody{body: res.Body, limit: t.event}
	} else {
		what := fmt.Sprintf("the model server's %d %s response", res.StatusCode, http.StatusText(res.StatusCode))
		res.Body = &totalLimitBody{body: res.Body, left: t.errBody, err: &TooLargeError{What: what, Limit: t.errBody}}
	}
	return res, nil
}

// CapBody returns body, failing with a *TooLargeError (saying what passed
// limit) once more than limit bytes were read.
func CapBody(body io.ReadCloser, limit int64, what string) io.ReadCloser {
	return &totalLimitBody{body: body, left: limit, err: &TooLargeError{What: what, Limit: limit}}
}

// totalLimitBody fails once more than its bound was read.
type totalLimitBody struct {
	body io.ReadCloser
	left int64
	err  *TooLargeError
}

func (b *totalLimitBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		// One byte past the bound: the body is larger than it.
		return n - 1, b.err
	}
	return n, err
}

func (b *totalLimitBody) Close() error { return b.body.Close() }

// eventLimitBody fails once one event (the bytes since the last blank line)
// reaches its bound. (Reaches, not passes: the SDKs' bufio.Scanner doubles
// its buffer when a line fills it; with lines shorter than a power-of-two
// bound, it never grows past the bound.) A blank line is what the SDKs' decoders (bufio.Scanner
// lines, a trailing \r dropped) take as one: "\n\n" or "\n\r\n"; a stream
// using lone \r as line ends is one long event here, as it is one long line
// there.
type eventLimitBody struct {
	body  io.ReadCloser
	limit int64
	n     int64 // bytes of the current event
	// state: 0 inside a line, 1 just after \n, 2 after \n\r
	state int
	err   error
}

func (b *eventLimitBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.body.Read(p)
	for i, c := range p[:n] {
		b.n++
		switch {
		case c == '\n' && b.state != 0:
			b.n, b.state = 0, 0 // a blank line: the event ends here
			continue
		case c == '\n':
			b.state = 1
		case c == '\r' && b.state == 1:
			b.state = 2
		default:
			b.state = 0
		}
		if b.n >= b.limit {
			b.err = &TooLargeError{What: "one event of the stream", Limit: b.limit, Reached: true}
			return i, b.err
		}
	}
	return n, err
}

func (b *eventLimitBody) Close() error { return b.body.Close() }
