package run

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-dev/hitl/exec"
)

// UsageError is a mistake in how hitl was called that only the run can
// see (a /command the agent lacks, a session that cannot be resumed):
// exit 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// OutcomeError ends a run that finished with a status other than success
// (rejected, cancelled); run.finished has reported it.
type OutcomeError struct{ Outcome exec.Outcome }

func (e *OutcomeError) Error() string {
	return fmt.Sprintf("%s: %s", e.Outcome.Status, e.Outcome.Text)
}

// Status is the run.finished status of a run that ended with err, whose
// exit code (DESIGN §6) is code.
func Status(code int, err error) exec.Status {
	switch code {
	case 0:
		return exec.StatusSuccess
	case 3:
		var o *OutcomeError
		if errors.As(err, &o) {
			return o.Outcome.Status
		}
		return exec.StatusRejected
	case 4:
		return exec.StatusInputRequired
	case 129, 130, 141, 143:
		return exec.StatusInterrupted
	}
	return exec.StatusError
}

// Resumable says whether a run that ended with status can be resumed (and
// a person should be told how).
func Resumable(s exec.Status) bool {
	return s == exec.StatusInputRequired || s == exec.StatusInterrupted || s == exec.StatusError
}

func newRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405-") + hex.EncodeToString(b[:])
}
