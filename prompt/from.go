package prompt

import "context"

// From is the agent a tool call runs for (DESIGN §13): its questions say
// so, whatever tool asks them.
type From struct {
	Agent  string
	TaskID string // a background agent's task
	// Member: not the agent the run started with.
	Member bool
}

type fromKey struct{}

// WithAgent marks ctx as running for f; Asker.Ask stamps each question
// asked under it.
func WithAgent(ctx context.Context, f From) context.Context {
	return context.WithValue(ctx, fromKey{}, f)
}

// AgentOf is the agent ctx runs for (WithAgent); zero when none is said.
func AgentOf(ctx context.Context) From {
	f, _ := ctx.Value(fromKey{}).(From)
	return f
}
