// Package tools builds the tools an agent's toolsets give the model.
package tools

import (
	"errors"
	"fmt"
	"io"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/remote"
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
	// Progress shows a line of progress to a person (nil: none, as with
	// --quiet or --json).
	Progress func(msg string)

	// remote is the callback server of the run's remote toolsets, made by
	// the first of them.
	remote *remote.Server
}

// Build returns the tools of agent a, in toolset order.
func Build(cfg *config.Config, a *config.Agent, d Deps) ([]exec.Tool, error) {
	var out []exec.Tool
	for _, ts := range a.Toolsets {
		tools, err := build(cfg, ts, &d)
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: toolset %s: %w", cfg.Path, ts.Pos.Line, ts.Pos.Col, ts.Type, err)
		}
		out = append(out, tools...)
	}
	return out, nil
}

func build(cfg *config.Config, ts *config.Toolset, d *Deps) ([]exec.Tool, error) {
	switch ts.Type {
	case "remote":
		return buildRemote(ts, d)
	case "verdict":
		return []exec.Tool{verdict.New()}, nil
	case "user_prompt":
		return []exec.Tool{userprompt.New(ts.Name, d.Asker)}, nil
	}
	return nil, fmt.Errorf("type %s is not implemented yet", ts.Type)
}

func buildRemote(ts *config.Toolset, d *Deps) ([]exec.Tool, error) {
	if d.remote == nil {
		d.remote = remote.NewServer()
	}
	opts := remote.Options{RunID: d.RunID, Server: d.remote, Asker: d.Asker, Progress: d.Progress}
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
