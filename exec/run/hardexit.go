package run

import (
	"context"
	"sync"
)

// HardExit is what must be done before hitl exits at once, without
// unwinding (a second Ctrl-C): each running run's journal is flushed and
// synced there, so the run stays resumable from its last completed step.
// It travels in the signal context (WithHardExit); there is no process-wide
// registry.
type HardExit struct {
	mu   sync.Mutex
	next int
	fns  map[int]func()
}

type hardExitKey struct{}

// WithHardExit returns ctx carrying a new HardExit, for the command line's
// signal handling to Run.
func WithHardExit(ctx context.Context) (context.Context, *HardExit) {
	h := &HardExit{fns: map[int]func(){}}
	return context.WithValue(ctx, hardExitKey{}, h), h
}

// Run calls every registered function.
func (h *HardExit) Run() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, fn := range h.fns {
		fn()
	}
}

// onHardExit registers fn with ctx's HardExit, if it carries one; the
// returned function unregisters it.
func onHardExit(ctx context.Context, fn func()) func() {
	h, ok := ctx.Value(hardExitKey{}).(*HardExit)
	if !ok {
		return func() {}
	}
	h.mu.Lock()
	id := h.next
	h.next++
	h.fns[id] = fn
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.fns, id)
		h.mu.Unlock()
	}
}
