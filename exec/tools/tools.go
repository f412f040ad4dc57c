// Package tools builds the tools an agent's toolsets give the model.
package tools

import (
	"fmt"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/askuser"
	"github.com/hitl-dev/hitl/exec/tools/askuserquestion"
	"github.com/hitl-dev/hitl/exec/tools/interaction"
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
}

// Build returns the tools of agent a, in toolset order.
func Build(cfg *config.Config, a *config.Agent, d Deps) ([]exec.Tool, error) {
	var out []exec.Tool
	for _, ts := range a.Toolsets {
		tools, err := build(cfg, ts, d)
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: toolset %s: %w", cfg.Path, ts.Pos.Line, ts.Pos.Col, ts.Type, err)
		}
		out = append(out, tools...)
	}
	return out, nil
}

func build(cfg *config.Config, ts *config.Toolset, d Deps) ([]exec.Tool, error) {
	switch ts.Type {
	case "verdict":
		return []exec.Tool{verdict.New()}, nil
	case "user_prompt":
		return []exec.Tool{userprompt.New(ts.Name, d.Asker)}, nil
	case "ask_user_question":
		return []exec.Tool{askuserquestion.New(ts.Name, d.Asker)}, nil
	case "ask_user":
		return []exec.Tool{askuser.New(ts.Name, d.Asker)}, nil
	case "interaction":
		return interaction.New(d.Asker), nil
	}
	return nil, fmt.Errorf("type %s is not implemented yet", ts.Type)
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
