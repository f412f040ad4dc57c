package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/prompt"
)

// gated applies ask and deny rules to a tool other than shell.
type gated struct {
	exec.Tool
	name    string
	checker *permissions.Checker
	asker   prompt.Questioner
}

func (g *gated) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var args map[string]any
	_ = json.Unmarshal(call.Arguments, &args)
	v := g.checker.Tool(g.name, args)
	switch v.Decision {
	case permissions.Deny:
		return exec.Result{IsError: true, Text: fmt.Sprintf("the call was not run: %s is denied by the permissions rule %q", g.name, v.Rule)}, nil
	case permissions.Ask:
		msg := fmt.Sprintf("Allow this call of %s?\n\n%s", g.name, string(call.Arguments))
		q := prompt.ApprovalQuestion(msg, false)
		q.CallID, q.Tool, q.Hint = call.ID, g.name, fmt.Sprintf("the permissions rule %q asks every time", v.Rule)
		ap, err := prompt.AskApproval(ctx, g.asker, q, "call")
		if err != nil {
			return exec.Result{}, err
		}
		if !ap.Approved {
			return exec.Result{IsError: true, Text: ap.Refusal}, nil
		}
	}
	return g.Tool.Call(ctx, call)
}
