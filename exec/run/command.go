package run

import (
	"context"
	"fmt"
	"strings"

	"github.com/hitl-dev/hitl/exec"
)

// runCommand runs the tool calls of the command the first message runs
// (cagent's ${tool({...})} expressions), in order, as the agent's own
// calls — checked, hooked, approved and shown like the model's (cagent runs
// them unasked) — and makes the first message of the text around them and
// their results. A refused call's refusal is its result. The message is
// journaled once made, so a resumed run does not run them again.
func (r *Run) runCommand(ctx context.Context, runner *exec.Runner) error {
	segs := r.opts.Command
	if len(segs) == 0 || len(r.state.Messages) != 1 {
		return nil
	}
	var b strings.Builder
	n := 0
	for _, s := range segs {
		if s.Call == nil {
			b.WriteString(s.Text)
			continue
		}
		n++
		call := exec.ToolCall{ID: fmt.Sprintf("command-%d", n), Name: s.Call.Tool, Arguments: s.Call.Args}
		res, err := runner.Invoke(ctx, call)
		if err != nil {
			return err
		}
		b.WriteString(strings.TrimSpace(res.Text))
	}
	r.state.Messages[0].Text = b.String()
	return r.journal.Message(r.state.Messages[0], r.state)
}
