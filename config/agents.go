package config

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	agentKeys            = []string{"model", "description", "instruction", "max_iterations", "add_date", "add_environment_info", "welcome_message", "commands", "toolsets"}
	unsupportedAgentKeys = []string{"sub_agents", "handoffs", "rag", "hooks", "structured_output", "add_prompt_files", "skills", "fallback", "num_history_items", "max_consecutive_tool_calls", "code_mode_tools", "mcps", "add_description_parameter"}
)

func (l *loader) agent(k, n *yaml.Node, models map[string]*Model) *Agent {
	a := &Agent{Name: k.Value, Pos: pos(k)}
	if !l.want(n, yaml.MappingNode, "an agent mapping with model and instruction") {
		return a
	}
	var modelNode *yaml.Node
	l.eachKey(n, "agent key", agentKeys, unsupportedAgentKeys, func(key string, kn, v *yaml.Node) {
		switch key {
		case "model":
			modelNode = v
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
			a.Commands = l.stringMap(v, false)
		case "toolsets":
			a.Toolsets = l.toolsets(v)
		}
	})
	a.Model = l.resolveModel(a, k, modelNode, models)
	l.checkToolNames(a)
	return a
}

func (l *loader) resolveModel(a *Agent, k, n *yaml.Node, models map[string]*Model) *Model {
	if n == nil {
		l.errorf(k, "agent %s has no model: name a key of models: or write provider/model", a.Name)
		return nil
	}
	ref := l.str(n)
	if m, ok := models[ref]; ok {
		return m
	}
	if provider, name, ok := strings.Cut(ref, "/"); ok && provider != "" && name != "" {
		l.checkProvider(n, provider)
		if provider == "script" {
			l.errorf(n, "an inline script model has no script; define it under models: with a script: list")
		}
		return &Model{Name: ref, Provider: provider, Model: name, Pos: pos(n)}
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

// checkToolNames rejects two toolsets that give the model one tool name.
func (l *loader) checkToolNames(a *Agent) {
	owner := map[string]*Toolset{}
	for _, ts := range a.Toolsets {
		for _, name := range ts.ToolNames() {
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
