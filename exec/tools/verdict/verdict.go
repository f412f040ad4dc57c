// Package verdict is the verdict toolset: the agent's final approve/reject
// decision, which ends the run (exit 0 approved, exit 3 rejected).
package verdict

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hitl-dev/hitl/exec"
)

// Tool is the verdict tool.
type Tool struct{}

// New returns the verdict tool.
func New() *Tool { return &Tool{} }

func (*Tool) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name:        "verdict",
		Description: "Give your final decision and end the run. approved: true lets the guarded action go ahead; false blocks it. reason explains the decision to the person.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"approved":{"type":"boolean","description":"true to approve, false to reject"},` +
			`"reason":{"type":"string","description":"why, in one or two sentences"}},` +
			`"required":["approved","reason"],"additionalProperties":false}`),
	}
}

type args struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason"`
}

// Call ends the run with the verdict.
func (*Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a args
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return exec.Result{IsError: true, Text: fmt.Sprintf("invalid arguments: %v", err)}, nil
	}
	out := &exec.Outcome{Status: exec.StatusSuccess, Text: a.Reason}
	text := "verdict recorded: approved"
	if !a.Approved {
		out.Status = exec.StatusRejected
		text = "verdict recorded: rejected"
	}
	return exec.Result{Text: text, End: out}, nil
}
