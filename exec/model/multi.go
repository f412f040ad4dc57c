package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model/cassette"
)

// stateful is a model whose state the session keeps (the script model's
// position), as session.Stateful.
type stateful interface {
	State() json.RawMessage
	Restore(json.RawMessage) error
}

// Alloy is cagent's alloy model: several models take turns. cagent picks
// one at random for each turn; hitl takes them in order (turn N on model N
// mod k), so a recorded run replays and a resumed run continues the same
// way. Its state (the next model and each model's own state) is kept in
// the session.
type Alloy struct {
	models []exec.Model
	mu     sync.Mutex
	next   int
}

func newAlloy(m *config.Model, o Options) (*Alloy, error) {
	a := &Alloy{}
	for _, sub := range m.Alloy {
		sm, err := New(sub, o)
		if err != nil {
			return nil, err
		}
		a.models = append(a.models, sm)
	}
	return a, nil
}

// Turn runs the turn on the next model.
func (a *Alloy) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	a.mu.Lock()
	m := a.models[a.next%len(a.models)]
	a.next = (a.next + 1) % len(a.models)
	a.mu.Unlock()
	return m.Turn(ctx, req)
}

type multiState struct {
	Next   int               `json:"next,omitempty"`
	Models []json.RawMessage `json:"models,omitempty"`
}

func subStates(models []exec.Model) []json.RawMessage {
	var out []json.RawMessage
	any := false
	for _, m := range models {
		var s json.RawMessage
		if st, ok := m.(stateful); ok {
			s, any = st.State(), true
		}
		out = append(out, s)
	}
	if !any {
		return nil
	}
	return out
}

func restoreSubs(models []exec.Model, states []json.RawMessage) error {
	for i, s := range states {
		if i >= len(models) || len(s) == 0 || string(s) == "null" {
			continue
		}
		if st, ok := models[i].(stateful); ok {
			if err := st.Restore(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// State is the next model's index and each model's state.
func (a *Alloy) State() json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	data, _ := json.Marshal(multiState{Next: a.next, Models: subStates(a.models)})
	return data
}

// Restore sets the state saved by State.
func (a *Alloy) Restore(data json.RawMessage) error {
	var s multiState
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	a.mu.Lock()
	a.next = s.Next % len(a.models)
	a.mu.Unlock()
	return restoreSubs(a.models, s.Models)
}

// Fallback runs a turn as cagent's fallback does: on the model, retried
// (Retries times, waiting Delay doubling) while the error is worth
// retrying (5xx, 408, a cut or malformed stream, a dropped connection),
// then on each fallback in order; an error not worth retrying (429, other
// 4xx, a turn past its bound) moves to the next model at once. When the
// first model failed that way and a fallback answered, the next turns start
// at that fallback until Cooldown has passed. The end of the run's context
// is returned at once. When every model failed, the last error is
// returned.
type Fallback struct {
	chain    []exec.Model
	names    []string
	retries  int
	cooldown time.Duration
	delay    time.Duration
	now      func() time.Time

	mu     sync.Mutex
	pinned int // chain index to start at during the cooldown
	until  time.Time
}

func newFallback(m *config.Model, o Options) (*Fallback, error) {
	primary := *m
	primary.Fallback = nil
	f := &Fallback{retries: m.Fallback.Retries, cooldown: m.Fallback.Cooldown, delay: o.TurnRetryDelay, now: time.Now}
	if f.delay <= 0 {
		f.delay = time.Second
	}
	for _, c := range append([]*config.Model{&primary}, m.Fallback.Models...) {
		cm, err := New(c, o)
		if err != nil {
			return nil, err
		}
		f.chain = append(f.chain, cm)
		f.names = append(f.names, c.Name)
	}
	return f, nil
}

// retryable reports whether err is worth another try on the same model. A
// cassette miss is not: when a turn failed over while recording, the failed
// request was not recorded, and the next model finds the recorded one.
func retryable(err error) bool {
	var miss *cassette.MissError
	if errors.As(err, &miss) {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500 || ae.Status == http.StatusRequestTimeout
	}
	var tl *TooLargeError
	var long *TooLongError
	if errors.As(err, &tl) || errors.As(err, &long) {
		return false
	}
	var se *StreamError
	return errors.As(err, &se)
}

// Turn runs the turn down the chain.
func (f *Fallback) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	f.mu.Lock()
	start := 0
	if f.pinned > 0 && f.now().Before(f.until) {
		start = f.pinned
	}
	f.mu.Unlock()
	var lastErr error
	primaryRefused := false
	for i := start; i < len(f.chain); i++ {
		delay := f.delay
		for attempt := 0; attempt <= f.retries; attempt++ {
			if attempt > 0 {
				select {
				case <-ctx.Done():
					return exec.Turn{}, ctx.Err()
				case <-time.After(delay):
				}
				delay *= 2
			}
			t, err := f.chain[i].Turn(ctx, req)
			if err == nil {
				f.mu.Lock()
				switch {
				case i > 0 && primaryRefused:
					f.pinned, f.until = i, f.now().Add(f.cooldown)
				case i == 0:
					f.pinned = 0
				}
				f.mu.Unlock()
				return t, nil
			}
			if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return exec.Turn{}, err
			}
			lastErr = err
			if !retryable(err) {
				if i == 0 {
					primaryRefused = true
				}
				break
			}
		}
	}
	return exec.Turn{}, fmt.Errorf("%s and its fallbacks failed, the last with: %w", f.names[start], lastErr)
}

// State is each model's state.
func (f *Fallback) State() json.RawMessage {
	data, _ := json.Marshal(multiState{Models: subStates(f.chain)})
	return data
}

// Restore sets the state saved by State.
func (f *Fallback) Restore(data json.RawMessage) error {
	var s multiState
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	return restoreSubs(f.chain, s.Models)
}
