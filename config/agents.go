package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	agentKeys            = []string{"model", "description", "instruction", "max_iterations", "add_date", "add_environment_info", "welcome_message", "commands", "toolsets", "add_prompt_files", "fallback", "sub_agents", "handoffs", "structured_output", "hooks", "rag", "skills"}
	unsupportedAgentKeys = []string{"num_history_items", "max_consecutive_tool_calls", "code_mode_tools", "mcps", "add_description_parameter", "memory", "think", "todo", "name"}
)

func (l *loader) agent(k, n *yaml.Node, models map[string]*Model) *Agent {
	a := &Agent{Name: k.Value, Pos: pos(k)}
	if !l.want(n, yaml.MappingNode, "an agent mapping with model and instruction") {
		return a
	}
	var modelNode, fallbackNode *yaml.Node
	l.eachKey(n, "agent key", agentKeys, unsupportedAgentKeys, func(key string, kn, v *yaml.Node) {
		switch key {
		case "model":
			modelNode = v
		case "fallback":
			fallbackNode = v
		case "description":
			a.Description = l.scalar(v)
		case "instruction":
			a.Instruction = l.scalar(v)
		case "max_iterations":
			a.MaxIterations = int(l.integer(v, 1))
		case "add_date":
			a.AddDate = l.boolean(v)
		case "add_environment_info":
			a.AddEnvironmentInfo = l.boolean(v)
		case "welcome_message":
			a.WelcomeMessage = l.scalar(v)
		case "commands":
			l.commands(a, v)
		case "toolsets":
			a.Toolsets = l.toolsets(v)
		case "add_prompt_files":
			a.PromptFiles = l.promptFiles(a, v)
		case "sub_agents":
			a.SubAgents = l.agentRefs(v, "sub_agents")
		case "handoffs":
			a.Handoffs = l.agentRefs(v, "handoffs")
		case "structured_output":
			a.StructuredOutput = l.structuredOutput(v)
		case "hooks":
			a.Hooks = l.hooks(v)
		case "rag":
			for i, name := range l.strings(v) {
				if r, ok := l.ragDefs[name]; ok {
					a.RAG = append(a.RAG, r)
				} else if i < len(v.Content) {
					l.errorf(v.Content[i], "agent %s: rag %q is not a key of the top-level rag:", a.Name, name)
				}
			}
		case "skills":
			a.Skills = l.skills(v)
			a.SkillsPos = pos(kn)
		}
	})
	a.Model = l.resolveModel(a, k, modelNode, models)
	if fallbackNode != nil {
		a.Model = withFallback(a.Model, l.fallback(a, fallbackNode, models))
	}
	l.toolsetModels(a, models)
	l.checkToolNames(a)
	l.checkServers(a)
	return a
}

// toolsetModels resolves the toolsets' model: (one model: cagent refuses
// an alloy there) and a model_picker's models: (any reference).
func (l *loader) toolsetModels(a *Agent, models map[string]*Model) {
	var picker *Toolset
	for _, ts := range a.Toolsets {
		if ts.modelNode != nil && ts.ModelRef != "" {
			if m := l.modelRef(a, ts.modelNode, ts.ModelRef, models, 0); m != nil {
				if len(m.Alloy) > 0 {
					l.errorf(ts.modelNode, "toolset model %q is an alloy model; a toolset's results are read by one model", ts.ModelRef)
				} else {
					ts.Model = m
				}
			}
		} else if ts.modelNode != nil {
			l.errorf(ts.modelNode, "toolset model is empty: name a key of models: or write provider/model")
		}
		if ts.Type != "model_picker" {
			continue
		}
		if picker != nil {
			l.errorf(&yaml.Node{Line: ts.Pos.Line, Column: ts.Pos.Col}, "agent %s has two model_picker toolsets (the other at line %d); list every model in one", a.Name, picker.Pos.Line)
		}
		picker = ts
		for i, ref := range ts.PickRefs {
			if i < len(ts.pickNodes) {
				if m := l.modelRef(a, ts.pickNodes[i], ref, models, 0); m != nil {
					ts.Models = append(ts.Models, m)
				}
			}
		}
	}
}

// promptFiles resolves add_prompt_files: a relative path is looked up next
// to the agent file, then (as cagent does) in the working directory and its
// parents, then the home directory. A file found nowhere adds nothing, as
// in cagent (hitl validate notes it: Agent.MissingPromptFiles).
func (l *loader) promptFiles(a *Agent, n *yaml.Node) []string {
	list := l.strings(n)
	dir := filepath.Dir(l.file)
	out := make([]string, 0, len(list))
	for i, p := range list {
		at := n.Content[i]
		p = l.expand(at, p)
		if p == "" {
			l.errorf(at, "add_prompt_files: an empty path")
			continue
		}
		full, ok := findPromptFile(dir, p)
		if !ok {
			a.MissingPromptFiles = append(a.MissingPromptFiles, AgentRef{Name: p, Pos: pos(at)})
			continue
		}
		out = append(out, full)
	}
	return out
}

func findPromptFile(dir, p string) (string, bool) {
	if filepath.IsAbs(p) {
		return p, isFile(p)
	}
	if full := filepath.Join(dir, p); isFile(full) {
		abs, err := filepath.Abs(full)
		if err != nil {
			return full, true
		}
		return abs, true
	}
	if cur, err := os.Getwd(); err == nil {
		for {
			if full := filepath.Join(cur, p); isFile(full) {
				return full, true
			}
			parent := filepath.Dir(cur)
			if parent == cur {
				break
			}
			cur = parent
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if full := filepath.Join(home, p); isFile(full) {
			return full, true
		}
	}
	return "", false
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func (l *loader) resolveModel(a *Agent, k, n *yaml.Node, models map[string]*Model) *Model {
	if n == nil {
		l.errorf(k, "agent %s has no model: name a key of models: or write provider/model", a.Name)
		return nil
	}
	return l.modelRef(a, n, l.str(n), models, 0)
}

// inlineModel resolves provider/model, or reports an unknown model name.
func (l *loader) inlineModel(a *Agent, n *yaml.Node, ref string, models map[string]*Model) *Model {
	if provider, name, ok := strings.Cut(ref, "/"); ok && provider != "" && name != "" {
		l.checkProvider(n, provider)
		if provider == "script" {
			l.errorf(n, "an inline script model has no script; define it under models: with a script: list")
		}
		m := &Model{Name: ref, Provider: provider, Model: name, Pos: pos(n)}
		if !l.applyProviderDef(m) {
			ApplyPreset(m)
		}
		return m
	}
	names := make([]string, 0, len(models))
	for name := range models {
		names = append(names, name)
	}
	sort.Strings(names)
	hint := "no models are defined"
	if len(names) > 0 {
		hint = "defined models: " + strings.Join(names, ", ")
	}
	l.errorf(n, "agent %s uses unknown model %q%s; %s, or write provider/model", a.Name, ref, didYouMean(ref, names), hint)
	return nil
}

// skills reads the skills: key: true (cagent's ["local"]), false, or a
// list of sources. "local" is the only source hitl has: an http(s) source
// is cagent's remote skills, which hitl does not fetch.
func (l *loader) skills(n *yaml.Node) bool {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!bool":
		return l.boolean(n)
	case n.Kind == yaml.SequenceNode:
		local := false
		for _, item := range n.Content {
			src := l.str(item)
			switch {
			case item.Kind != yaml.ScalarNode || item.Tag != "!!str":
			case src == "local":
				local = true
			case strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://"):
				l.errorf(item, "skills source %q: remote skills are not supported by hitl (it fetches nothing from the network to build a prompt); use local", src)
			default:
				l.errorf(item, "unknown skills source %q: expected local (or an http:// or https:// URL, which hitl does not support)", src)
			}
		}
		return local
	}
	l.errorf(n, "expected true, false or a list of skills sources (local), got %s", kindName(n))
	return false
}

// checkToolNames rejects two toolsets that give the model one tool name,
// a toolset that gives read_skill to an agent with skills, and a tool
// named as the ones deferred tools bring (search_tool, add_tool).
func (l *loader) checkToolNames(a *Agent) {
	owner := map[string]*Toolset{}
	deferring := DeferringToolset(a)
	for _, ts := range a.Toolsets {
		for _, name := range ts.ToolNames() {
			if a.Skills && name == "read_skill" {
				l.errs = append(l.errs, &Error{File: l.file, Pos: ts.Pos, Msg: fmt.Sprintf(
					"agent %s: toolset %s gives the model a tool named %q, as skills: (line %d) does; rename it (name:) or leave it out (tools:)",
					a.Name, ts.Type, name, a.SkillsPos.Line)})
				continue
			}
			if deferring != nil && slices.Contains(DeferToolNames(), name) {
				l.errs = append(l.errs, &Error{File: l.file, Pos: ts.Pos, Msg: fmt.Sprintf(
					"agent %s: toolset %s gives the model a tool named %q, which the agent's deferred tools (defer: on line %d) bring: rename it with name:, or filter it out with tools:",
					a.Name, ts.Type, name, deferring.Pos.Line)})
				continue
			}
			if prev, ok := owner[name]; ok {
				l.errs = append(l.errs, &Error{File: l.file, Pos: ts.Pos, Msg: fmt.Sprintf(
					"agent %s: toolsets %s (line %d) and %s both give the model a tool named %q; rename one with name:",
					a.Name, prev.Type, prev.Pos.Line, ts.Type, name)})
				continue
			}
			owner[name] = ts
		}
	}
}

// DeferToolNames are the tools an agent with deferred tools gets besides
// (cagent's): search_tool finds deferred tools, add_tool activates one.
func DeferToolNames() []string { return []string{"search_tool", "add_tool"} }

// DeferringToolset returns agent a's first toolset with defer:, or nil.
func DeferringToolset(a *Agent) *Toolset {
	for _, ts := range a.Toolsets {
		if ts.HasDefer() {
			return ts
		}
	}
	return nil
}
