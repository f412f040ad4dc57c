// Package tools builds the tools an agent's toolsets give the model.
package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/exec/tools/askuser"
	"github.com/hitl-dev/hitl/exec/tools/askuserquestion"
	"github.com/hitl-dev/hitl/exec/tools/interaction"
	"github.com/hitl-dev/hitl/exec/tools/remote"
	"github.com/hitl-dev/hitl/exec/tools/shell"
	"github.com/hitl-dev/hitl/exec/tools/userprompt"
	"github.com/hitl-dev/hitl/exec/tools/verdict"
	"github.com/hitl-dev/hitl/prompt"
)

// Deps is what toolsets need from the run.
type Deps struct {
	// WorkingDir is where shell commands run (--working-dir).
	WorkingDir string
	// RunID identifies the run (the remote protocol's group_id).
	RunID string
	// Asker asks the run's questions.
	Asker *prompt.Asker
	// Secrets holds secret answers, for shell environments and remote
	// arguments.
	Secrets *prompt.Secrets
	// Permissions gate tool calls (shell approvals).
	Permissions config.Permissions
	// Yolo approves shell commands without asking (deny and ask rules
	// still apply).
	Yolo bool
	// Approvals are shell command lines approved for the session before
	// (a resumed run).
	Approvals []string
	// HiddenEnv names environment variables shell commands do not inherit:
	// the ones holding model API keys.
	HiddenEnv []string
	// OnApproval is told of each command line approved for the session
	// (the session journal), if set.
	OnApproval func(command string)
	// ToolApprovals are the keys of other acting tools' calls approved for
	// the session before (a resumed run); OnToolApproval is told of each
	// new one (the session journal), if set.
	ToolApprovals  []string
	OnToolApproval func(key string)
	// Progress shows a line of progress to a person (nil: none, as with
	// --quiet or --json).
	Progress func(msg string)
	// Resumed is the conversation of a resumed run (nil for a new one):
	// think and todo rebuild their state from it.
	Resumed []exec.Message
	// Getenv reads the environment (the memory toolset's default path);
	// nil: os.Getenv.
	Getenv func(string) string
	// Sandbox starts every child process of the run (DESIGN §12).
	Sandbox *sandbox.Sandbox
	// MCP are the agent's MCP servers, started by StartMCP.
	MCP *MCPServers
	// CallStates are what MCP calls kept when the run stopped in the
	// middle of them, by call id (a resumed run); OnCallState is told of
	// each call that keeps one (the session journal), if set.
	CallStates  map[string]json.RawMessage
	OnCallState func(callID string, state json.RawMessage)
	// Notice tells a person what they must know that is not an event
	// (stderr), if set.
	Notice func(msg string)
}

// Build returns the tools of agent a, in toolset order.
//
// Tools other than shell that an ask or deny rule of the permissions names
// are wrapped: denied calls become error results, asked ones need a
// person's approval. Shell applies the permissions itself.
func Build(cfg *config.Config, a *config.Agent, d Deps) ([]exec.Tool, error) {
	checker, err := permissions.New(d.Permissions.Allow, d.Permissions.Ask, d.Permissions.Deny)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	var out []exec.Tool
	var callbacks *remote.Server // shared by the remote toolsets of the run
	session := &sessionApprovals{onAdd: d.OnToolApproval}
	for _, k := range d.ToolApprovals {
		session.restore(k)
	}
	for _, ts := range a.Toolsets {
		if ts.Type == "remote" && callbacks == nil {
			callbacks = remote.NewServer()
		}
		tools, err := build(cfg, ts, d, checker, callbacks)
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: toolset %s: %w", cfg.Path, ts.Pos.Line, ts.Pos.Col, ts.Type, err)
		}
		for _, t := range tools {
			if ts.Type != "shell" && gates(checker, t) {
				t = &gated{Tool: t, name: t.Spec().Name, checker: checker, asker: askerOf(d), yolo: d.Yolo, session: session}
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// gates says whether t's calls go through the gate: a tool that acts, or
// one an ask or deny rule names.
func gates(c *permissions.Checker, t exec.Tool) bool {
	if _, ok := t.(exec.Acting); ok {
		return true
	}
	return c.Gates(t.Spec().Name)
}

// askerOf avoids a nil *prompt.Asker inside a non-nil interface.
func askerOf(d Deps) prompt.Questioner {
	if d.Asker == nil {
		return nil
	}
	return d.Asker
}

func build(cfg *config.Config, ts *config.Toolset, d Deps, checker *permissions.Checker, callbacks *remote.Server) ([]exec.Tool, error) {
	switch ts.Type {
	case "remote":
		return buildRemote(ts, d, callbacks)
	case "shell":
		var secrets shell.Secrets
		if d.Secrets != nil {
			secrets = d.Secrets
		}
		t := shell.New(shell.Options{
			Env: ts.Env, WorkingDir: ts.WorkingDir, BaseDir: d.WorkingDir, Timeout: ts.Timeout, Shell: ts.Shell, Hide: d.HiddenEnv,
			Asker: askerOf(d), Secrets: secrets, Permissions: checker, Yolo: d.Yolo, OnApprove: d.OnApproval,
			Sandbox: d.Sandbox,
		})
		t.Restore(d.Approvals)
		return []exec.Tool{t}, nil
	case "verdict":
		return []exec.Tool{verdict.New()}, nil
	case "user_prompt":
		return []exec.Tool{userprompt.New(ts.ToolNames()[0], d.Asker)}, nil
	case "ask_user_question":
		return []exec.Tool{askuserquestion.New(ts.ToolNames()[0], d.Asker)}, nil
	case "ask_user":
		return []exec.Tool{askuser.New(ts.ToolNames()[0], d.Asker)}, nil
	case "interaction":
		return interaction.New(d.Asker), nil
	case "filesystem", "think", "todo", "memory", "fetch", "script":
		return buildBuiltin(cfg, ts, d, checker)
	case "mcp":
		return buildMCP(ts, d)
	}
	return nil, fmt.Errorf("type %s is not implemented yet", ts.Type)
}

func buildRemote(ts *config.Toolset, d Deps, callbacks *remote.Server) ([]exec.Tool, error) {
	opts := remote.Options{RunID: d.RunID, Server: callbacks, Asker: askerOf(d), Progress: d.Progress}
	if d.Secrets != nil {
		opts.Secrets = d.Secrets
	}
	rts, err := remote.New(ts, opts)
	if err != nil {
		return nil, err
	}
	out := make([]exec.Tool, len(rts))
	for i, t := range rts {
		out[i] = t
	}
	return out, nil
}

// Close releases what the tools hold (the remote callback server); call it
// when the run ends.
func Close(list []exec.Tool) error {
	var errs []error
	for _, t := range list {
		if g, ok := t.(*gated); ok {
			t = g.Tool
		}
		if c, ok := t.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// VerdictRequired reports whether agent a has a verdict toolset with
// required: true.
func VerdictRequired(a *config.Agent) bool {
	for _, ts := range a.Toolsets {
		if ts.Type == "verdict" && ts.Required {
			return true
		}
	}
	return false
}
