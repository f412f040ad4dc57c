// Package tools builds the tools an agent's toolsets give the model.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/exec/tools/api"
	"github.com/hitl-dev/hitl/exec/tools/askuser"
	"github.com/hitl-dev/hitl/exec/tools/askuserquestion"
	"github.com/hitl-dev/hitl/exec/tools/interaction"
	"github.com/hitl-dev/hitl/exec/tools/modelpicker"
	"github.com/hitl-dev/hitl/exec/tools/openapi"
	"github.com/hitl-dev/hitl/exec/tools/remote"
	"github.com/hitl-dev/hitl/exec/tools/shell"
	"github.com/hitl-dev/hitl/exec/tools/skills"
	"github.com/hitl-dev/hitl/exec/tools/team"
	"github.com/hitl-dev/hitl/exec/tools/toon"
	"github.com/hitl-dev/hitl/exec/tools/userprompt"
	"github.com/hitl-dev/hitl/exec/tools/verdict"
	"github.com/hitl-dev/hitl/prompt"
)

// Deps is what toolsets need from the run.
type Deps struct {
	// Ctx bounds what building the tools waits for (an OpenAPI document).
	Ctx context.Context
	// RAG gives the tool of a rag entry the agent names (its documents
	// indexed once for the run).
	RAG func(r *config.RAG) (exec.Tool, error)
	// ToolModels, when set, gets the model reference (cagent's toolset
	// model:) of each tool whose toolset names one, as the tools are
	// built: the agent's model.Switch reads it.
	ToolModels map[string]string
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
	// Shared holds what the agents of a run share: the approvals given
	// for the session (nil: the tools' own).
	Shared *Shared
	// Team runs the agents transfer_task and background_agents give work
	// to (nil: an agent with sub_agents cannot be built).
	Team *Team
	// Skills are the skills the run found (skills.Discover, once per
	// run): an agent with skills: gets read_skill and the prompt section
	// when there is at least one.
	Skills *skills.Set
}

// Shared is what every agent of a run shares (DESIGN §13): approvals given
// "for this session" hold for all of them.
type Shared struct {
	Shell *shell.Approvals
	tools *sessionApprovals
}

// NewShared makes the run's shared approvals: shell lines and tool keys
// approved before (a resumed run), and where new tool keys are recorded.
func NewShared(lines, keys []string, onKey func(string)) *Shared {
	s := &Shared{Shell: &shell.Approvals{}, tools: &sessionApprovals{onAdd: onKey}}
	t := shell.New(shell.Options{Approvals: s.Shell})
	t.Restore(lines)
	for _, k := range keys {
		s.tools.restore(k)
	}
	return s
}

// Team is what an agent's team tools need from the run.
type Team struct {
	Starter team.Starter
	// Chain is the agents above the one being built, ending with it.
	Chain []string
	// Ctx, Record, Fail and Tasks are for background agents: the run's
	// context, where task starts and ends are recorded, how a task stops
	// the run, and the tasks a resumed run knew.
	Ctx    context.Context
	Record func(team.Task)
	Fail   func(error)
	Tasks  []team.Task
}

// Build returns the tools of agent a, in toolset order, and its deferred
// tools (cagent's defer:; nil when it has none): those are held by the
// Deferral, whose search_tool and add_tool follow the toolsets' tools.
//
// Tools other than shell that an ask or deny rule of the permissions names
// are wrapped: denied calls become error results, asked ones need a
// person's approval. Shell applies the permissions itself. A deferred tool
// is wrapped as it would be offered. The tools a toolset's toon: names give
// their JSON object results as TOON, whatever their approvals said.
func Build(cfg *config.Config, a *config.Agent, d Deps) ([]exec.Tool, *exec.Deferral, error) {
	checker, err := permissions.New(d.Permissions.Allow, d.Permissions.Ask, d.Permissions.Deny)
	if err == nil {
		err = checker.WithNetwork(d.Permissions.Network)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	var out, deferred []exec.Tool
	var callbacks *remote.Server // shared by the remote toolsets of the run
	session := &sessionApprovals{onAdd: d.OnToolApproval}
	for _, k := range d.ToolApprovals {
		session.restore(k)
	}
	if d.Shared != nil {
		session = d.Shared.tools
	}
	for _, ts := range a.Toolsets {
		if ts.Type == "remote" && callbacks == nil {
			callbacks = remote.NewServer()
		}
		tools, err := build(cfg, a, ts, d, checker, callbacks)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d:%d: toolset %s: %w", cfg.Path, ts.Pos.Line, ts.Pos.Col, ts.Type, err)
		}
		toonNames, err := toon.Compile(ts.Toon)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d:%d: toolset %s: toon: %w", cfg.Path, ts.Pos.Line, ts.Pos.Col, ts.Type, err)
		}
		for _, t := range tools {
			name := t.Spec().Name
			if ts.Model != nil && d.ToolModels != nil {
				d.ToolModels[name] = ts.ModelRef
			}
			if ts.Type != "shell" && gates(checker, t) {
				t = &gated{Tool: t, name: name, checker: checker, asker: askerOf(d), yolo: d.Yolo, session: session}
			}
			if toonNames.Matches(name) {
				tt := &tooned{Tool: t}
				if d.Secrets != nil {
					tt.mask = d.Secrets.Mask
				}
				t = tt
			}
			if ts.Defers(name) {
				deferred = append(deferred, t)
			} else {
				out = append(out, t)
			}
		}
	}
	for _, r := range a.RAG {
		if d.RAG == nil {
			return nil, nil, fmt.Errorf("%s:%d:%d: agent %s: rag %s: this run cannot index documents", cfg.Path, a.Pos.Line, a.Pos.Col, a.Name, r.Name)
		}
		t, err := d.RAG(r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d:%d: %w", cfg.Path, r.Pos.Line, r.Pos.Col, err)
		}
		if gates(checker, t) {
			t = &gated{Tool: t, name: t.Spec().Name, checker: checker, asker: askerOf(d), yolo: d.Yolo, session: session}
		}
		out = append(out, t)
	}
	if t := skillsTool(a, d); t != nil {
		// After the toolsets' tools, as cagent adds its skills toolset.
		for _, o := range out {
			if o.Spec().Name == skills.Name {
				return nil, nil, fmt.Errorf("%s:%d:%d: agent %s: skills: gives the model a tool named %q, and a toolset gives one too; leave that one out with the toolset's tools:",
					cfg.Path, a.SkillsPos.Line, a.SkillsPos.Col, a.Name, skills.Name)
			}
		}
		if gates(checker, t) {
			t = &gated{Tool: t, name: t.Spec().Name, checker: checker, asker: askerOf(d), yolo: d.Yolo, session: session}
		}
		out = append(out, t)
	}
	deferral := exec.NewDeferral(deferred)
	team, err := teamTools(a, d)
	if err != nil {
		return nil, nil, fmt.Errorf("%s:%d:%d: agent %s: %w", cfg.Path, a.Pos.Line, a.Pos.Col, a.Name, err)
	}
	// search_tool and add_tool after the toolsets' tools (cagent's place).
	for _, t := range append(deferral.Tools(), team...) {
		if gates(checker, t) {
			t = &gated{Tool: t, name: t.Spec().Name, checker: checker, asker: askerOf(d), yolo: d.Yolo, session: session}
		}
		out = append(out, t)
	}
	return out, deferral, nil
}

// skillsTool is read_skill for an agent with skills: when the run found
// at least one skill (nil otherwise).
func skillsTool(a *config.Agent, d Deps) exec.Tool {
	if !a.Skills {
		return nil
	}
	if t := skills.NewTool(d.Skills); t != nil {
		return t
	}
	return nil
}

// teamTools are transfer_task (sub_agents) and handoff (handoffs).
func teamTools(a *config.Agent, d Deps) ([]exec.Tool, error) {
	var out []exec.Tool
	if len(a.SubAgents) > 0 {
		if d.Team == nil {
			return nil, fmt.Errorf("sub_agents: this run cannot start other agents")
		}
		out = append(out, &team.Transfer{From: a.Name, SubAgents: refNames(a.SubAgents), Chain: d.Team.Chain, Starter: d.Team.Starter})
	}
	if len(a.Handoffs) > 0 {
		out = append(out, &team.Handoff{From: a.Name, Handoffs: refNames(a.Handoffs)})
	}
	return out, nil
}

func refNames(refs []config.AgentRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.Name
	}
	return out
}

func buildBackground(a *config.Agent, ts *config.Toolset, d Deps) ([]exec.Tool, error) {
	if d.Team == nil {
		return nil, fmt.Errorf("this run cannot start other agents")
	}
	b := &team.Background{From: a.Name, SubAgents: refNames(a.SubAgents), Chain: d.Team.Chain, Starter: d.Team.Starter,
		Ctx: d.Team.Ctx, Record: d.Team.Record, Fail: d.Team.Fail}
	if b.Ctx == nil {
		b.Ctx = context.Background()
	}
	b.Restore(d.Team.Tasks)
	list := b.Tools()
	list[0] = withCloser(list[0], b)
	return filter(ts, list), nil
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

func build(cfg *config.Config, a *config.Agent, ts *config.Toolset, d Deps, checker *permissions.Checker, callbacks *remote.Server) ([]exec.Tool, error) {
	switch ts.Type {
	case "background_agents":
		return buildBackground(a, ts, d)
	case "api":
		c := ts.API
		if c == nil {
			return nil, fmt.Errorf("no api_config")
		}
		var mask func(string) string
		if d.Secrets != nil {
			mask = d.Secrets.Mask
		}
		return []exec.Tool{api.New(api.Config{
			Name: c.Name, Instruction: c.Instruction, Endpoint: c.Endpoint, Method: c.Method, Headers: c.Headers,
			Args: c.Args, Required: c.Required, OutputSchema: c.OutputSchema,
		}, mask, nil)}, nil
	case "remote":
		return buildRemote(ts, d, callbacks)
	case "shell":
		var secrets shell.Secrets
		if d.Secrets != nil {
			secrets = d.Secrets
		}
		var shared *shell.Approvals
		if d.Shared != nil {
			shared = d.Shared.Shell
		}
		t := shell.New(shell.Options{
			Env: ts.Env, WorkingDir: ts.WorkingDir, BaseDir: d.WorkingDir, Timeout: ts.Timeout, Shell: ts.Shell, Hide: d.HiddenEnv,
			Asker: askerOf(d), Secrets: secrets, Permissions: checker, Yolo: d.Yolo, OnApprove: d.OnApproval,
			Sandbox: d.Sandbox, Approvals: shared, DenyRead: denyRead(cfg, d.Permissions.DenyRead),
		})
		t.Restore(d.Approvals)
		return []exec.Tool{t}, nil
	case "verdict":
		return []exec.Tool{verdict.New()}, nil
	case "model_picker":
		return modelpicker.New(ts.PickRefs), nil
	case "openapi":
		ctx := d.Ctx
		if ctx == nil {
			ctx = context.Background()
		}
		var mask func(string) string
		if d.Secrets != nil {
			mask = d.Secrets.Mask
		}
		return openapi.Load(ctx, ts.URL, openapi.Options{Headers: ts.Headers, Mask: mask, Sandbox: d.Sandbox, Getenv: d.Getenv})
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
		if c, ok := unwrap(t).(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// unwrap is the tool inside the run's wrappers (toon, the gate).
func unwrap(t exec.Tool) exec.Tool {
	if x, ok := t.(*tooned); ok {
		t = x.Tool
	}
	if g, ok := t.(*gated); ok {
		t = g.Tool
	}
	return t
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

// PrepareSandbox starts, in the background, the run's sandbox that agent
// a's shell toolsets run lines in unasked, as Build does when it builds
// them: a run calls it as soon as it knows its agent, before its journal,
// hooks and servers, so that the sandbox is ready by the first line.
func PrepareSandbox(cfg *config.Config, a *config.Agent, d Deps) {
	checker, err := permissions.New(d.Permissions.Allow, d.Permissions.Ask, d.Permissions.Deny)
	if err != nil || d.Sandbox == nil {
		return // Build says why, if anything is wrong
	}
	for _, ts := range a.Toolsets {
		if ts.Type == "shell" {
			shell.Prepare(shell.Options{
				WorkingDir: ts.WorkingDir, BaseDir: d.WorkingDir, Sandbox: d.Sandbox,
				Permissions: checker, DenyRead: denyRead(cfg, d.Permissions.DenyRead),
			})
		}
	}
}

// denyRead are permissions.deny_read's paths made absolute: ~/ in the
// user's home, relative ones against the agent file's directory.
func denyRead(cfg *config.Config, paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		switch {
		case p == "~" || strings.HasPrefix(p, "~/"):
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		case !filepath.IsAbs(p):
			p = filepath.Join(filepath.Dir(cfg.Path), p)
		}
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, abs)
		}
	}
	return out
}
