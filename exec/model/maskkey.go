package model

import (
	"context"
	"strings"

	"github.com/hitl-dev/hitl/exec"
)

// minMaskedKey is the shortest key hidden in errors: a shorter one would
// mangle their text, and no provider issues one.
const minMaskedKey = 8

// maskKey hides key in m's errors: a server (or a proxy at base_url) that
// echoes the key back in its message would have it printed, journaled and
// kept in CI logs.
func maskKey(m exec.Model, key string) exec.Model {
	if len(key) < minMaskedKey {
		return m
	}
	return &keyMasked{Model: m, key: key}
}

type keyMasked struct {
	exec.Model
	key string
}

func (k *keyMasked) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	t, err := k.Model.Turn(ctx, req)
	if err != nil && strings.Contains(err.Error(), k.key) {
		err = &maskedError{err: err, key: k.key}
	}
	return t, err
}

// maskedError is an error whose text held the key; its types are still
// found through it (errors.As).
type maskedError struct {
	err error
	key string
}

func (e *maskedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.key, "[the API key]")
}

func (e *maskedError) Unwrap() error { return e.err }
