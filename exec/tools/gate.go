package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/prompt"
)

// gated applies the permissions to a tool other than shell (which applies
// them itself): deny and ask rules to every call; and for a tool that acts
// (exec.Acting: a file write, a fetch, an MCP tool not marked read-only),
// a person's approval of each call that acts, unless an allow rule,
// --yolo or an approval "for this session" covers it.
type gated struct {
	exec.Tool
	name    string
	checker *permissions.Checker
	asker   prompt.Questioner
	yolo    bool
	session *sessionApprovals
}

// sessionApprovals are the approval keys a person approved "for this
// session" (exec.Approval.SessionKey), shared by the tools of a run.
type sessionApprovals struct {
	mu   sync.Mutex
	keys map[string]bool
	// onAdd is told of each new key (the session journal), if set.
	onAdd func(key string)
}

func (s *sessionApprovals) has(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return k != "" && s.keys[k]
}

func (s *sessionApprovals) add(k string) {
	s.restore(k)
	if s.onAdd != nil {
		s.onAdd(k)
	}
}

// restore marks k approved without telling onAdd (a resumed run's).
func (s *sessionApprovals) restore(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = map[string]bool{}
	}
	s.keys[k] = true
}

// ruleArgser is a tool that reads but says what rules judge of a call (the
// filesystem reads: their paths resolved as the writes' are), so a rule
// cannot be passed by naming a file another way.
type ruleArgser interface {
	RuleArgs(call exec.ToolCall) map[string]any
}

func (g *gated) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var args map[string]any
	_ = json.Unmarshal(call.Arguments, &args)
	if r, ok := g.Tool.(ruleArgser); ok {
		if a := r.RuleArgs(call); a != nil {
			args = a
		}
	}
	var ap exec.Approval
	acting := false
	if a, ok := g.Tool.(exec.Acting); ok {
		var err error
		ap, acting, err = a.Approval(ctx, call)
		if err != nil {
			return exec.Result{IsError: true, Text: err.Error()}, nil
		}
		if ap.Args != nil {
			args = ap.Args // what the call really does (a resolved path)
		}
	}
	v := g.verdict(args, ap.Server, ap.Parts)
	reason := v.Reason
	// A call that sends a secret (DESIGN §5), reaches what the sandbox
	// hides (§15) or runs a program no sandbox confines (§12) is a
	// person's to approve: never auto-allowed, never for the session.
	personOnly := acting && (ap.Secret || ap.Hidden != "" || ap.Unconfined)
	if personOnly {
		ap.SessionKey = ""
		if v.Decision == permissions.Allow {
			v = permissions.Verdict{}
			if ap.Secret {
				reason = "its arguments hold a secret placeholder: a person approves every call that sends a secret"
			}
		}
		switch {
		case reason != "":
		case ap.Hidden != "":
			reason = "it reaches " + ap.Hidden + ", hidden from what runs unasked: a person approves every call that reads or changes it"
		case ap.Unconfined:
			reason = "no sandbox can confine commands here, so allow rules do not apply (docs/security.md)"
		}
	}
	switch v.Decision {
	case permissions.Deny:
		return exec.Result{IsError: true, Text: fmt.Sprintf("the call was not run: %s is denied by the permissions rule %q", g.name, v.Rule)}, nil
	case permissions.Allow:
		return g.Tool.Call(ctx, call)
	case permissions.Ask:
		reason = fmt.Sprintf("the permissions rule %q asks every time", v.Rule)
		ap.SessionKey = "" // asked every time
	default:
		if !acting || g.yolo || g.session.has(ap.SessionKey) {
			return g.Tool.Call(ctx, call)
		}
		if reason == "" {
			reason = "no permissions rule allows it"
		}
	}
	show := ap.Show
	if show == "" {
		show = string(call.Arguments)
	}
	what := g.name
	if ap.Server != "" {
		what = fmt.Sprintf("%s (MCP server %s)", g.name, ap.Server)
	}
	q := prompt.ApprovalQuestion(fmt.Sprintf("Allow this call of %s?\n\n%s", what, show), ap.SessionKey != "")
	q.HandsSecret = acting && ap.Secret
	q.PersonOnly = personOnly
	q.CallID, q.Tool, q.Server, q.Hint = call.ID, g.name, ap.Server, reason
	q.Subject = show
	res, err := prompt.AskApproval(ctx, g.asker, q, "call")
	if err != nil {
		return exec.Result{}, err
	}
	if !res.Approved {
		return exec.Result{IsError: true, Text: res.Refusal}, nil
	}
	if res.Session && res.Person {
		g.session.add(ap.SessionKey)
	}
	return g.Tool.Call(ctx, call)
}

// verdict judges a call by the tool's name and, for an MCP tool, its
// qualified name mcp:SERVER:TOOL too: the stronger decision wins.
func (g *gated) verdict(args map[string]any, server string, parts []string) permissions.Verdict {
	v := g.checker.ToolParts(g.name, args, parts)
	if server != "" {
		if q := g.checker.ToolParts("mcp:"+server+":"+g.name, args, parts); q.Decision > v.Decision {
			v = q
		}
	}
	return v
}
