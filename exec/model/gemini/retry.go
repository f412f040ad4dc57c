package gemini

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hitl-dev/hitl/exec/model/internal/provider"
)

// retryTransport retries a request answered 408, 429 or 5xx, or lost to a
// dropped connection, at most retries times, waiting as the server says
// (Retry-After) when it says so and that is within delayCap (a longer wait
// returns the answer at once), else firstDelay doubling. The genai SDK's
// own retries ignore Retry-After, so hitl's replace them.
type retryTransport struct {
	next       http.RoundTripper
	retries    int
	delayCap   time.Duration
	firstDelay time.Duration
	attempts   atomic.Int32 // attempts of the current request
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	delay := t.firstDelay
	if delay <= 0 {
		delay = provider.DefaultTurnRetryDelay
	}
	for n := 0; ; n++ {
		t.attempts.Add(1)
		res, err := next.RoundTrip(req)
		if n >= t.retries || req.Context().Err() != nil || !retryable(res, err) {
			return res, err
		}
		wait := delay
		if d, ok := provider.RetryAfter(res); ok {
			if d > t.delayCap {
				return res, err
			}
			wait = max(d, 0)
		}
		if req.GetBody == nil && req.Body != nil && req.Body != http.NoBody {
			return res, err
		}
		if res != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, provider.MaxErrorBody))
			res.Body.Close()
		}
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, gerr
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(wait):
		}
		delay *= 2
	}
}

func retryable(res *http.Response, err error) bool {
	if err != nil {
		// A dropped connection or a silent server (a net.Error), not a
		// response past a bound or past its time.
		return !isContext(err) && provider.IsCut(err)
	}
	switch {
	case res.StatusCode == http.StatusRequestTimeout, res.StatusCode == http.StatusTooManyRequests:
		return true
	case res.StatusCode >= 500:
		return true
	}
	return false
}

func isContext(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
