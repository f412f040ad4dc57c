package exec

import (
	"context"
	"errors"
)

// A call that acts (a shell command) says so, right before it acts, with
// StartActing: the run's journal records the call's start on disk first, and its
// end (the result) as soon as it returns, so a run killed at any point
// never runs it again on resume (DESIGN §17).

// CallJournal is a Journal that records the start and end of the calls
// that act, and gives back what it recorded of a call a resumed run finds
// pending.
type CallJournal interface {
	// Started records, on disk, that call id is about to act.
	Started(id string) error
	// Ended records, on disk, the result of call id, which acted.
	Ended(id string, res Result) error
	// Stopped records that call id was stopped by the run itself (a
	// signal: its processes were ended), so a resumed run runs it again,
	// as it runs any step that did not complete.
	Stopped(id string) error
	// Recorded is what the journal holds of call id from before the run
	// was stopped: its result when it ended, an interrupted result when it
	// started and never ended; ok is false when it never started.
	Recorded(id string) (res Result, ok bool)
}

type actingKey struct{}

// withActing gives the tool's StartActing call start.
func withActing(ctx context.Context, start func() error) context.Context {
	return context.WithValue(ctx, actingKey{}, start)
}

// StartActing is called by a tool right before it acts (after every check and
// approval): with a journal, the call's start is on disk when it returns
// nil. An error means the start could not be recorded: the tool must not
// act.
func StartActing(ctx context.Context) error {
	start, _ := ctx.Value(actingKey{}).(func() error)
	if start == nil {
		return nil
	}
	if err := start(); err != nil {
		return errors.Join(errors.New("the session journal could not record the call's start, so it was not run"), err)
	}
	return nil
}

// InterruptedText is the result of a call a resumed run finds started and
// never ended: hitl was stopped (killed) while it ran, and it is not run
// again.
const InterruptedText = "hitl was stopped while this call was running, so its outcome is unknown; it was not run again. Check its effects before running it again."
