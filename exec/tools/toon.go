package tools

import (
	"context"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/toon"
)

// tooned gives the model a tool's JSON object results as TOON (cagent's
// toolset toon:), error results too. It wraps the tool as the gate left it:
// the approvals and rules judge the call as before, and only the text the
// model receives changes.
//
// The tool masked the secrets its result holds, as written; decoded, the
// JSON may spell one another way (a \u escape the mask did not know): the
// TOON text is masked again (mask, when set).
type tooned struct {
	exec.Tool
	mask func(string) string
}

func (t *tooned) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	res, err := t.Tool.Call(ctx, call)
	if err != nil {
		return res, err
	}
	if text, ok := toon.Convert(res.Text); ok {
		if t.mask != nil {
			text = t.mask(text)
		}
		res.Text = text
	}
	return res, nil
}

// Server is the MCP server of the tool inside ("" for a built-in one).
func (t *tooned) Server() string {
	if s, ok := t.Tool.(interface{ Server() string }); ok {
		return s.Server()
	}
	return ""
}

// AsksPerson is the inner tool's (exec.Asking): TOON changes the result,
// not the question.
func (t *tooned) AsksPerson() bool {
	a, ok := t.Tool.(exec.Asking)
	return ok && a.AsksPerson()
}
