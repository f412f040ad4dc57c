package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// runtimeTools are the tools cagent runs without tool hooks (its runtime
// handles them): an agent's team and model tools.
var runtimeTools = map[string]bool{
	"transfer_task": true, "handoff": true, "change_model": true, "revert_model": true,
	"run_background_agent": true, "list_background_agents": true, "view_background_agent": true,
	"stop_background_agent": true, "wait_background_agents": true,
}

// Run is the hooks of a run's agents: the tool hooks of each
// (CallHooks), the permission_request answer source (Permission), and the
// other events.
type Run struct {
	Runner *Runner
	// Agents are the run's agents by name.
	Agents map[string]*config.Agent
	// Notice tells the person (stderr, an event) what a hook said or how
	// it failed.
	Notice func(string)
	// Ctx is the run's: a signal ends a permission_request hook's wait.
	Ctx context.Context

	args sync.Map // call id → the arguments that call runs with
}

func (r *Run) notice(res Result) {
	if r.Notice == nil {
		return
	}
	for _, n := range res.Notices {
		r.Notice(n)
	}
}

// For is agent's tool hooks, nil when it has none.
func (r *Run) For(agent string) exec.CallHooks {
	a := r.Agents[agent]
	if a == nil || a.Hooks == nil {
		return nil
	}
	return &callHooks{run: r, agent: a}
}

type callHooks struct {
	run   *Run
	agent *config.Agent
}

// Before runs the pre_tool_use hooks matching the call: a block (or a
// hook that failed: fail closed) is an error result for the model; an
// updated_input replaces the call's arguments, as cagent does, before
// anything judges them.
func (h *callHooks) Before(ctx context.Context, call exec.ToolCall) (exec.ToolCall, *exec.Result) {
	h.run.args.Store(call.ID, call.Arguments)
	if runtimeTools[call.Name] {
		return call, nil
	}
	list := h.agent.Hooks.Matching(config.HookPreToolUse, call.Name)
	if len(list) == 0 {
		return call, nil
	}
	res := h.run.Runner.Run(ctx, list, Input{Event: config.HookPreToolUse, ToolName: call.Name, ToolUseID: call.ID, ToolInput: call.Arguments, Agent: h.agent.Name})
	h.run.notice(res)
	switch {
	case res.Failed > 0:
		return call, &exec.Result{IsError: true, Text: fmt.Sprintf("Tool call blocked: %d pre_tool_use hook(s) failed, and a hook that fails blocks the call", res.Failed)}
	case res.Blocked:
		return call, &exec.Result{IsError: true, Text: "Tool call blocked by hook: " + res.Message}
	}
	if res.UpdatedInput != nil {
		data, err := json.Marshal(res.UpdatedInput)
		if err != nil {
			return call, &exec.Result{IsError: true, Text: "Tool call blocked: a pre_tool_use hook's updated_input cannot be used: " + err.Error()}
		}
		call.Arguments = data
		h.run.args.Store(call.ID, call.Arguments)
		if h.run.Notice != nil {
			h.run.Notice(fmt.Sprintf("a pre_tool_use hook rewrote the arguments of %s to %s", call.Name, data))
		}
	}
	return call, nil
}

// After runs the post_tool_use hooks matching the call; what they say is
// told the person (as cagent: nothing goes back to the model).
func (h *callHooks) After(ctx context.Context, call exec.ToolCall, out exec.Result) {
	h.run.args.Delete(call.ID)
	if runtimeTools[call.Name] {
		return
	}
	list := h.agent.Hooks.Matching(config.HookPostToolUse, call.Name)
	if len(list) == 0 {
		return
	}
	res := h.run.Runner.Run(ctx, list, Input{Event: config.HookPostToolUse, ToolName: call.Name, ToolUseID: call.ID, ToolInput: call.Arguments,
		ToolResponse: &ToolResponse{Text: out.Text, IsError: out.IsError}, Agent: h.agent.Name})
	h.run.notice(res)
	if res.Context != "" && h.run.Notice != nil {
		h.run.Notice("post_tool_use hook: " + res.Context)
	}
}

// Permission is the permission_request hooks as an answer source (after
// the answers file, before approvers and the person): only an approval
// is theirs to answer, and only an explicit decision answers it —
// permission_decision allow is "once", deny (or exit 2) is "no"; a hook
// that fails, says nothing or says ask leaves the question to the next
// source.
func (r *Run) Permission() prompt.Answerer { return permission{r} }

type permission struct{ r *Run }

func (p permission) Answer(q prompt.Question) (prompt.Answer, bool, error) {
	if q.Consent != prompt.ConsentApproval || q.PersonOnly {
		// What no allow rule approves, no program of the file does.
		return prompt.Answer{}, false, nil
	}
	a := p.r.Agents[q.Agent]
	if a == nil || a.Hooks == nil {
		return prompt.Answer{}, false, nil
	}
	list := a.Hooks.Matching(config.HookPermissionRequest, q.Tool)
	if len(list) == 0 {
		return prompt.Answer{}, false, nil
	}
	var args json.RawMessage
	if v, ok := p.r.args.Load(q.CallID); ok {
		args = v.(json.RawMessage)
	}
	subject := q.Subject
	if subject == "" {
		subject = q.Message
	}
	ctx := p.r.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	res := p.r.Runner.Run(ctx, list, Input{Event: config.HookPermissionRequest, ToolName: q.Tool, ToolUseID: q.CallID, ToolInput: args, Agent: a.Name, Message: subject})
	p.r.notice(res)
	who := fmt.Sprintf("permission_request hook (%s)", a.Name)
	var ans prompt.Answer
	switch {
	case res.Decision == "deny" || (res.Blocked && res.Failed == 0):
		ans = prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"no"`), Source: prompt.SourceHook}
		if m := strings.TrimSpace(res.Message); m != "" {
			ans.Content, ans.Text = nil, m
		}
	case res.Decision == "allow" && res.Failed == 0:
		ans = prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"once"`), Source: prompt.SourceHook}
	default:
		return prompt.Answer{}, false, nil
	}
	// The consent rule (prompt.Admit): a hook's answer is bound to the
	// call it was shown, and never a person's.
	ans, err := prompt.Admit(q, prompt.Reply{Answer: ans}, "")
	if err != nil {
		if p.r.Notice != nil {
			p.r.Notice(fmt.Sprintf("the %s answered question %s, and its answer is not taken: %v", who, q.ID, err))
		}
		return prompt.Answer{}, false, nil
	}
	ans.Approver = who
	return ans, true, nil
}
