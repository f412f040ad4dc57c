package config

import (
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// toolsetType is what hitl knows of a toolset type: the keys it accepts
// besides "type", and the names of the tools it gives the model unless
// renamed with name: (remote toolsets name theirs in tools:). The default
// tool names are written here and nowhere else.
type toolsetType struct {
	keys  []string
	tools []string
}

var toolsetTypes = map[string]toolsetType{
	"user_prompt":       {keys: []string{"name"}, tools: []string{"user_prompt"}},
	"ask_user_question": {keys: []string{"name"}, tools: []string{"AskUserQuestion"}},
	"ask_user":          {keys: []string{"name"}, tools: []string{"ask_user"}},
	"interaction":       {tools: []string{"ask_confirmation", "ask_question"}},
	"remote":            {keys: []string{"url", "tools", "timeout", "headers", "callback_host", "allow_response_hosts"}},
	"shell":             {keys: []string{"env", "timeout", "working_dir", "shell"}, tools: []string{"shell"}},
	"verdict":           {keys: []string{"required"}, tools: []string{"verdict"}},
}

// cagent features hitl does not implement: named so the error can say
// "not supported by hitl" instead of "unknown".
var (
	unsupportedToolsets = []string{"filesystem", "mcp", "fetch", "think", "todo", "memory", "script", "api", "a2a", "lsp", "background_agents", "transfer_task", "rag", "openapi", "tasks", "user_prompt_v2"}
	unsupportedToolKeys = []string{"instruction", "defer", "ref", "command", "args", "config", "toon", "sandbox", "post_edit", "models", "remote"}
	remoteToolKeys      = []string{"name", "description", "parameters"}
)

func (l *loader) toolsets(n *yaml.Node) []*Toolset {
	if !l.want(n, yaml.SequenceNode, "a list of toolsets") {
		return nil
	}
	var out []*Toolset
	for _, item := range n.Content {
		if ts := l.toolset(item); ts != nil {
			out = append(out, ts)
		}
	}
	return out
}

func supportedTypes() []string {
	types := make([]string, 0, len(toolsetTypes))
	for t := range toolsetTypes {
		types = append(types, t)
	}
	sort.Strings(types)
	return types
}

func (l *loader) toolset(n *yaml.Node) *Toolset {
	if !l.want(n, yaml.MappingNode, "a toolset mapping with type") {
		return nil
	}
	ts := &Toolset{Pos: pos(n)}
	var typeNode *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "type" {
			typeNode = n.Content[i+1]
		}
	}
	if typeNode == nil {
		l.errorf(n, "toolset has no type; supported types: %s", strings.Join(supportedTypes(), ", "))
		return nil
	}
	ts.Type = l.str(typeNode)
	tt, ok := toolsetTypes[ts.Type]
	keys := tt.keys
	switch {
	case ok:
	case contains(unsupportedToolsets, ts.Type):
		l.errorf(typeNode, "toolset type %q is not supported by hitl; supported types: %s", ts.Type, strings.Join(supportedTypes(), ", "))
		return nil
	default:
		l.errorf(typeNode, "unknown toolset type %q%s; supported types: %s", ts.Type, didYouMean(ts.Type, supportedTypes()), strings.Join(supportedTypes(), ", "))
		return nil
	}
	known := append([]string{"type"}, keys...)
	l.eachKey(n, ts.Type+" toolset key", known, unsupportedToolKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			ts.Name = l.str(v)
		case "required":
			ts.Required = l.boolean(v)
		case "env":
			ts.Env = l.stringMap(v, true)
		case "timeout":
			ts.Timeout = l.duration(v)
		case "working_dir":
			ts.WorkingDir = l.str(v)
		case "shell":
			ts.Shell = l.str(v)
		case "url":
			ts.URL = l.expand(v, l.str(v))
		case "tools":
			ts.Tools = l.remoteTools(v)
		case "headers":
			ts.Headers = l.stringMap(v, true)
		case "callback_host":
			ts.CallbackHost = l.str(v)
		case "allow_response_hosts":
			ts.AllowResponseHosts = l.strings(v)
		}
	})
	if ts.Type == "remote" {
		if ts.URL == "" {
			l.errorf(n, "remote toolset has no url: the tool server's invocation endpoint")
		}
		if len(ts.Tools) == 0 {
			l.errorf(n, "remote toolset declares no tools:")
		}
	}
	return ts
}

func (l *loader) remoteTools(n *yaml.Node) []RemoteTool {
	return mappings(l, n, "a list of tools with name, description, parameters", "a tool with name, description, parameters", func(item *yaml.Node) RemoteTool {
		var t RemoteTool
		l.eachKey(item, "remote tool key", remoteToolKeys, nil, func(key string, k, v *yaml.Node) {
			switch key {
			case "name":
				t.Name = l.str(v)
			case "description":
				t.Description = l.scalar(v)
			case "parameters":
				t.Parameters = l.jsonValue(v)
			}
		})
		if t.Name == "" {
			l.errorf(item, "remote tool has no name")
		}
		return t
	})
}

// ToolNames returns the names of the tools a toolset gives the model.
func (ts *Toolset) ToolNames() []string {
	if ts.Name != "" {
		return []string{ts.Name}
	}
	if ts.Type == "remote" {
		names := make([]string, len(ts.Tools))
		for i, t := range ts.Tools {
			names[i] = t.Name
		}
		return names
	}
	return toolsetTypes[ts.Type].tools
}
