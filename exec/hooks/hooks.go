// Package hooks runs an agent's hooks (cagent's hooks: key): commands the
// agent file's author wrote, run at points of the run — before and after a
// tool call, when a call needs approval (hitl's permission_request), when
// the run starts and ends, and before hitl waits for a person. Each runs
// through the run's sandbox (DESIGN §12) with the event as JSON on stdin.
//
// What a hook can do is bounded: a pre_tool_use hook can block a call or
// rewrite its arguments before the rules and the person judge them (so what
// was judged is what runs); a permission_request hook can answer an
// approval, and only by an explicit decision. A hook that fails, hangs past
// its timeout or writes too much never approves anything, and a failed
// pre_tool_use hook blocks the call (cagent lets it through).
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hitl-dev/hitl/config"
)

// MaxOutput bounds what is read of a hook's stdout and stderr each.
const MaxOutput = 1 << 20

// Starter runs one hook command (through /bin/sh -c, in the sandbox) with
// stdin, within ctx, and returns its stdout, stderr and exit code; err is a
// hook that did not run to an exit (not started, killed, past its time,
// output past MaxOutput).
type Starter interface {
	RunHook(ctx context.Context, command string, stdin []byte) (stdout, stderr []byte, exit int, err error)
}

// Input is what a hook reads on stdin (cagent's field names).
type Input struct {
	SessionID    string          `json:"session_id"`
	Cwd          string          `json:"cwd"`
	Event        string          `json:"hook_event_name"`
	ToolName     string          `json:"tool_name,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse *ToolResponse   `json:"tool_response,omitempty"`
	Source       string          `json:"source,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	// Agent is the agent whose hook runs (hitl's).
	Agent string `json:"agent,omitempty"`
	// Message is what a permission_request asks a person to approve.
	Message string `json:"message,omitempty"`
}

// ToolResponse is a call's result, for post_tool_use.
type ToolResponse struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error"`
}

// output is what a hook may print (cagent's fields).
type output struct {
	Continue   *bool  `json:"continue"`
	StopReason string `json:"stop_reason"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	SystemMsg  string `json:"system_message"`
	Specific   *struct {
		PermissionDecision string          `json:"permission_decision"`
		Reason             string          `json:"permission_decision_reason"`
		UpdatedInput       json.RawMessage `json:"updated_input"`
		AdditionalContext  string          `json:"additional_context"`
	} `json:"hook_specific_output"`
}

// Result is the combined outcome of an event's hooks.
type Result struct {
	// Blocked: a hook blocked (exit 2, continue: false, decision: block,
	// permission_decision: deny), or failed where failing blocks;
	// Message says why.
	Blocked bool
	Message string
	// Decision is a permission decision: "allow" or "deny" when a hook
	// made one (deny wins), "" otherwise.
	Decision string
	// UpdatedInput is the arguments pre_tool_use hooks rewrote the call
	// to (their objects merged in order), nil if none did.
	UpdatedInput map[string]any
	// Context is what the hooks added (additional_context, and the plain
	// stdout of session_start and post_tool_use).
	Context string
	// Notices are the hooks' system_message texts and their failures.
	Notices []string
	// Failed counts the hooks that failed (did not run to exit 0 or 2).
	Failed int
}

// Runner runs hooks.
type Runner struct {
	Start Starter
	// SessionID and Cwd go into every input.
	SessionID string
	Cwd       string
}

// Run runs hooks at once for in, and combines what they said.
func (r *Runner) Run(ctx context.Context, hooks []config.Hook, in Input) Result {
	if len(hooks) == 0 {
		return Result{}
	}
	in.SessionID, in.Cwd = r.SessionID, r.Cwd
	stdin, err := json.Marshal(in)
	if err != nil {
		return Result{Blocked: true, Message: "hook input: " + err.Error(), Failed: len(hooks)}
	}
	// One line: a shell's read gets it whole.
	stdin = append(stdin, '\n')
	outs := make([]one, len(hooks))
	var wg sync.WaitGroup
	for i, h := range hooks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = r.runOne(ctx, h, stdin)
		}()
	}
	wg.Wait()
	var res Result
	var why, ctxt []string
	for i, o := range outs {
		if o.err != nil {
			res.Failed++
			res.Notices = append(res.Notices, fmt.Sprintf("hook %s (line %d) failed: %v", in.Event, hooks[i].Pos.Line, o.err))
			continue
		}
		o.apply(in.Event, &res, &why, &ctxt)
	}
	res.Message = strings.Join(why, "\n")
	res.Context = strings.Join(ctxt, "\n")
	return res
}

// one is what one hook did.
type one struct {
	stdout, stderr []byte
	exit           int
	err            error
}

func (r *Runner) runOne(ctx context.Context, h config.Hook, stdin []byte) one {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = config.DefaultHookTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stdout, stderr, exit, err := r.Start.RunHook(hctx, h.Command, stdin)
	switch {
	case errors.Is(hctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		err = fmt.Errorf("no exit within its timeout of %s", timeout)
	case err == nil && exit != 0 && exit != 2:
		err = fmt.Errorf("exit status %d%s", exit, tail(stderr))
	}
	return one{stdout: stdout, stderr: stderr, exit: exit, err: err}
}

func (o one) apply(event string, res *Result, why, ctxt *[]string) {
	if o.exit == 2 {
		res.Blocked = true
		if event == config.HookPermissionRequest {
			res.Decision = "deny"
		}
		if m := strings.TrimSpace(string(o.stderr)); m != "" {
			*why = append(*why, m)
		}
		return
	}
	text := strings.TrimSpace(string(o.stdout))
	var out output
	if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &out) != nil {
		if text != "" && (event == config.HookSessionStart || event == config.HookPostToolUse) {
			*ctxt = append(*ctxt, text)
		}
		return
	}
	if out.Continue != nil && !*out.Continue {
		res.Blocked = true
		*why = appendNonEmpty(*why, out.StopReason)
	}
	if out.Decision == "block" {
		res.Blocked = true
		*why = appendNonEmpty(*why, out.Reason)
	}
	if out.SystemMsg != "" {
		res.Notices = append(res.Notices, out.SystemMsg)
	}
	if s := out.Specific; s != nil {
		*ctxt = appendNonEmpty(*ctxt, s.AdditionalContext)
		switch s.PermissionDecision {
		case "deny":
			res.Blocked = true
			res.Decision = "deny"
			*why = appendNonEmpty(*why, s.Reason)
		case "allow":
			if res.Decision == "" {
				res.Decision = "allow"
			}
		}
		if event == config.HookPreToolUse && len(s.UpdatedInput) > 0 {
			var m map[string]any
			if json.Unmarshal(s.UpdatedInput, &m) == nil && m != nil {
				if res.UpdatedInput == nil {
					res.UpdatedInput = map[string]any{}
				}
				for k, v := range m {
					res.UpdatedInput[k] = v
				}
			}
		}
	}
}

func appendNonEmpty(list []string, s string) []string {
	if s = strings.TrimSpace(s); s != "" {
		return append(list, s)
	}
	return list
}

func tail(stderr []byte) string {
	s := strings.TrimSpace(string(stderr))
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if len(last) > 200 {
		last = last[:200] + "…"
	}
	return ": " + last
}

// Capped is a writer keeping at most MaxOutput bytes; Over says more came.
// The buffer is a named field: a promoted ReadFrom would let io.Copy
// bypass Write and its bound.
type Capped struct {
	buf  bytes.Buffer
	Over bool
}

// Bytes is what was kept.
func (c *Capped) Bytes() []byte { return c.buf.Bytes() }

func (c *Capped) Write(p []byte) (int, error) {
	if room := MaxOutput - c.buf.Len(); len(p) > room {
		c.Over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return 0, errOverflow
	}
	return c.buf.Write(p)
}

var errOverflow = errors.New("output over the bound")
