package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/exec/tools/team"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/ext"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/exec/tools/fetch"
	"github.com/hitl-dev/hitl/exec/tools/filesystem"
	"github.com/hitl-dev/hitl/exec/tools/memory"
	"github.com/hitl-dev/hitl/exec/tools/modelpicker"
	"github.com/hitl-dev/hitl/exec/tools/openapi"
	"github.com/hitl-dev/hitl/exec/tools/rag"
	"github.com/hitl-dev/hitl/exec/tools/script"
	"github.com/hitl-dev/hitl/exec/tools/think"
	"github.com/hitl-dev/hitl/exec/tools/todo"
)

// buildBuiltin makes the tools of one of cagent's built-in toolsets
// (DESIGN §11), keeping only those its tools: filter names. Their approvals
// are the gate's (Build wraps every exec.Acting tool); on a resumed run,
// think and todo rebuild their state from the conversation (d.Resumed).
func buildBuiltin(cfg *config.Config, ts *config.Toolset, d Deps, checker *permissions.Checker) ([]exec.Tool, error) {
	switch ts.Type {
	case "filesystem":
		fs := filesystem.New(filesystemOptions(cfg, ts, d))
		list := filter(ts, fs.Tools())
		if len(list) == 0 {
			return nil, fs.Close()
		}
		// The toolset holds its directories open: Close (at the run's end)
		// releases them through the first tool.
		list[0] = withCloser(list[0], fs)
		return list, nil
	case "think":
		t := think.New(think.Options{})
		if d.Resumed != nil {
			t.Resume(d.Resumed)
		}
		return filter(ts, []exec.Tool{t}), nil
	case "todo":
		s := todo.New(todo.Options{})
		if d.Resumed != nil {
			if err := s.Resume(d.Resumed); err != nil {
				return nil, fmt.Errorf("rebuilding the list from the session: %w", err)
			}
		}
		return filter(ts, s.Tools()), nil
	case "memory":
		s, err := memory.New(memoryOptions(cfg, ts, d))
		if err != nil {
			return nil, err
		}
		return filter(ts, s.Tools()), nil
	case "fetch":
		o := fetch.Options{Timeout: ts.Timeout, Judge: func(u string) (bool, bool) {
			v := checker.Tool(fetch.Name, map[string]any{"urls": []any{u}})
			return v.Decision == permissions.Allow, v.Decision == permissions.Deny || v.Decision == permissions.Ask
		}, HTML: func(ctx context.Context, page string, markdown bool) (string, error) {
			return ext.RenderHTML(ctx, d.Sandbox, d.Getenv, page, markdown)
		}}
		if d.Secrets != nil {
			o.Secrets = d.Secrets
		}
		return filter(ts, []exec.Tool{fetch.New(o)}), nil
	case "script":
		s, err := newScript(ts, d)
		if err != nil {
			return nil, err
		}
		return filter(ts, s.Tools()), nil
	}
	return nil, fmt.Errorf("type %s is not a built-in toolset", ts.Type)
}

func filesystemOptions(cfg *config.Config, ts *config.Toolset, d Deps) filesystem.Options {
	o := filesystem.Options{
		WorkingDir:  d.WorkingDir,
		AllowedDirs: ts.AllowedDirs,
		IgnoreVCS:   ts.IgnoreVCS,
		Hide:        d.HiddenEnv,
		Sandbox:     d.Sandbox,
	}
	// What a command nobody saw cannot read, a tool reads only asked.
	for _, p := range sandbox.CredentialStores() {
		o.Hidden = append(o.Hidden, filesystem.Hidden{Path: p, By: "the credential stores"})
	}
	for _, p := range denyRead(cfg, d.Permissions.DenyRead) {
		o.Hidden = append(o.Hidden, filesystem.Hidden{Path: p, By: "permissions.deny_read"})
	}
	if d.Sandbox != nil && d.Sandbox.StateDir() != "" {
		// The sessions, their key, the approvals: no child reads them.
		o.Hidden = append(o.Hidden, filesystem.Hidden{Path: d.Sandbox.StateDir(), By: "hitl's state directory"})
	}
	for _, p := range ts.PostEdit {
		o.PostEdit = append(o.PostEdit, filesystem.PostEdit{Path: p.Path, Cmd: p.Cmd})
	}
	if d.Secrets != nil {
		o.Secrets = d.Secrets
	}
	return o
}

// memoryOptions: the default file is named after the agent file (cagent's
// config name); a relative path is relative to --working-dir, else to the
// agent file's directory (as cagent resolves it).
func memoryOptions(cfg *config.Config, ts *config.Toolset, d Deps) memory.Options {
	base := filepath.Base(cfg.Path)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	dir := d.WorkingDir
	if dir == "" {
		dir = filepath.Dir(cfg.Path)
	}
	return memory.Options{Path: ts.Path, BaseDir: dir, Name: base, Getenv: d.Getenv}
}

func newScript(ts *config.Toolset, d Deps) (*script.Toolset, error) {
	o := script.Options{
		Commands: map[string]script.Command{},
		Env:      ts.Env,
		BaseDir:  d.WorkingDir,
		Timeout:  ts.Timeout,
		Hide:     d.HiddenEnv,
		Sandbox:  d.Sandbox,
	}
	if d.Secrets != nil {
		o.Secrets = d.Secrets
	}
	for _, c := range ts.Scripts {
		var args map[string]any
		if len(c.Args) > 0 {
			if err := json.Unmarshal(c.Args, &args); err != nil {
				return nil, fmt.Errorf("shell.%s.args: %w", c.Name, err)
			}
		}
		o.Commands[c.Name] = script.Command{
			Cmd: c.Cmd, Description: c.Description, Args: args, Required: c.Required,
			Env: c.Env, WorkingDir: c.WorkingDir,
		}
	}
	return script.New(o)
}

// filter keeps the tools the toolset's tools: list names (all when it has
// none).
func filter(ts *config.Toolset, list []exec.Tool) []exec.Tool {
	if ts.Filter == nil {
		return list
	}
	var out []exec.Tool
	for _, t := range list {
		for _, name := range ts.Filter {
			if t.Spec().Name == name {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// Instructions are the guidance agent a's built-in toolsets add to the
// system prompt, in toolset order (as cagent adds each toolset's
// instructions after the agent's instruction), then the list of the skills
// the run found when a has skills: (cagent adds its skills toolset last).
// A toolset whose tools are all deferred (defer: true) adds none, as in
// cagent: the model has none of its tools at first (the deferred tools'
// own section is exec.DeferredInstructions).
func Instructions(a *config.Agent, d Deps) []string {
	var out []string
	for _, ts := range a.Toolsets {
		if ts.DeferAll {
			continue
		}
		var text string
		switch ts.Type {
		case "filesystem":
			text = filesystem.Instructions
		case "think":
			text = think.Instructions
		case "todo":
			text = todo.Instructions
		case "memory":
			text = memory.Instructions
		case "fetch":
			text = fetch.Instructions
		case "background_agents":
			text = team.Instructions()
		case "model_picker":
			text = modelpicker.Instructions(ts.PickRefs)
		case "openapi":
			text = openapi.Instructions(ts.URL)
		case "script":
			// Only the commands the tools: filter keeps.
			only := *ts
			only.Scripts = nil
			for _, c := range ts.Scripts {
				if ts.Filter == nil || slices.Contains(ts.Filter, c.Name) {
					only.Scripts = append(only.Scripts, c)
				}
			}
			if s, err := newScript(&only, d); err == nil {
				text = s.Instructions()
			}
		}
		if ts.Instruction != "" {
			// cagent's toolset instruction: it replaces the toolset's
			// own guidance, which {ORIGINAL_INSTRUCTIONS} brings back.
			text = strings.ReplaceAll(ts.Instruction, "{ORIGINAL_INSTRUCTIONS}", text)
		}
		if strings.TrimSpace(text) != "" {
			out = append(out, text)
		}
	}
	for _, r := range a.RAG {
		out = append(out, rag.Instructions(r))
	}
	if a.Skills {
		if text := d.Skills.Prompt(); text != "" {
			out = append(out, text)
		}
	}
	return out
}

// withCloser makes t release c when the run's tools are closed, keeping
// whether t acts (the gate must still see an exec.Acting).
func withCloser(t exec.Tool, c io.Closer) exec.Tool {
	if ar, ok := t.(actingRuleArgsTool); ok {
		// A read asked only for some paths (the filesystem reads): the
		// gate still judges its resolved paths.
		return &actingRuleArgsCloser{actingRuleArgsTool: ar, c: c}
	}
	if a, ok := t.(exec.Acting); ok {
		return &actingCloser{Acting: a, c: c}
	}
	if r, ok := t.(ruleArgsTool); ok {
		return &ruleArgsCloser{ruleArgsTool: r, c: c}
	}
	return &toolCloser{Tool: t, c: c}
}

// ruleArgsTool is a tool that says what rules judge (ruleArgser).
type ruleArgsTool interface {
	exec.Tool
	ruleArgser
}

type ruleArgsCloser struct {
	ruleArgsTool
	c io.Closer
}

func (t *ruleArgsCloser) Close() error { return t.c.Close() }

type toolCloser struct {
	exec.Tool
	c io.Closer
}

func (t *toolCloser) Close() error { return t.c.Close() }

// actingRuleArgsTool is an acting tool that says what rules judge.
type actingRuleArgsTool interface {
	exec.Acting
	ruleArgser
}

type actingRuleArgsCloser struct {
	actingRuleArgsTool
	c io.Closer
}

func (t *actingRuleArgsCloser) Close() error { return t.c.Close() }

type actingCloser struct {
	exec.Acting
	c io.Closer
}

func (t *actingCloser) Close() error { return t.c.Close() }

var _ exec.Acting = (*actingCloser)(nil)
