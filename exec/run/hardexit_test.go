package run

import (
	"context"
	"testing"
)

// What a run registers in the signal context runs on a hard exit (a second
// Ctrl-C flushes the journal), and not once the run has unregistered it.
func TestHardExitRunsWhatTheRunRegistered(t *testing.T) {
	ctx, h := WithHardExit(context.Background())
	calls := 0
	unregister := onHardExit(ctx, func() { calls++ })
	h.Run()
	if calls != 1 {
		t.Fatalf("registered function ran %d times, want 1", calls)
	}
	unregister()
	h.Run()
	if calls != 1 {
		t.Fatalf("after unregistering it ran again")
	}
	// A context without a HardExit registers nothing and does not fail.
	onHardExit(context.Background(), func() { t.Fatal("ran") })()
}
