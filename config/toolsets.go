package config

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// toolsetType is what hitl knows of a toolset type: the keys it accepts
// besides "type", and the tools it gives the model (unless renamed with
// name:; remote toolsets name theirs in tools:, mcp servers theirs when they
// answer, script toolsets theirs in shell:). The default tool names and
// their arguments are written here and nowhere else.
type toolsetType struct {
	keys  []string
	tools []tool
}

// tool is a built-in tool's name and the arguments it takes (the names a
// permission rule may use: TOOL:ARG=GLOB).
type tool struct {
	name string
	args []string
}

var toolsetTypes = map[string]toolsetType{
	"user_prompt":       {keys: []string{"name"}, tools: []tool{{"user_prompt", []string{"message", "title", "schema"}}}},
	"ask_user_question": {keys: []string{"name"}, tools: []tool{{"AskUserQuestion", []string{"questions"}}}},
	"ask_user":          {keys: []string{"name"}, tools: []tool{{"ask_user", []string{"question", "hint", "options", "multiple", "custom"}}}},
	"interaction": {tools: []tool{
		{"ask_confirmation", []string{"question", "target_tool"}},
		{"ask_question", []string{"question", "options"}},
	}},
	"remote":  {keys: []string{"url", "tools", "timeout", "headers", "callback_host", "allow_response_hosts"}},
	"shell":   {keys: []string{"env", "timeout", "working_dir", "shell"}, tools: []tool{{"shell", []string{"cmd", "cwd", "timeout"}}}},
	"verdict": {keys: []string{"required"}, tools: []tool{{"verdict", []string{"approved", "reason"}}}},
	"mcp":     {keys: []string{"command", "args", "env", "remote", "ref", "tools", "name", "timeout", "version", "config"}},
	"filesystem": {keys: []string{"tools", "ignore_vcs", "post_edit", "allowed_directories"}, tools: []tool{
		{"read_file", []string{"path"}},
		{"read_multiple_files", []string{"paths", "json"}},
		{"list_directory", []string{"path"}},
		{"directory_tree", []string{"path"}},
		{"search_files_content", []string{"path", "query", "is_regex", "excludePatterns"}},
		{"write_file", []string{"path", "content"}},
		{"edit_file", []string{"path", "edits"}},
		{"create_directory", []string{"paths"}},
		{"remove_directory", []string{"paths"}},
	}},
	"think": {keys: []string{"tools"}, tools: []tool{{"think", []string{"thought"}}}},
	"todo": {keys: []string{"tools", "shared"}, tools: []tool{
		{"create_todo", []string{"description"}},
		{"create_todos", []string{"descriptions"}},
		{"update_todos", []string{"updates"}},
		{"list_todos", nil},
	}},
	"memory": {keys: []string{"tools", "path"}, tools: []tool{
		{"add_memory", []string{"memory", "category"}},
		{"get_memories", nil},
		{"delete_memory", []string{"id"}},
		{"search_memories", []string{"query", "category"}},
		{"update_memory", []string{"id", "memory", "category"}},
	}},
	"fetch":   {keys: []string{"tools", "timeout"}, tools: []tool{{"fetch", []string{"urls", "timeout", "format"}}}},
	"script":  {keys: []string{"tools", "shell", "env"}},
	"api":     {keys: []string{"api_config"}},
	"openapi": {keys: []string{"url", "headers"}},
	"model_picker": {keys: []string{"models"}, tools: []tool{
		{"change_model", []string{"model"}},
		{"revert_model", nil},
	}},
	"background_agents": {keys: []string{"tools"}, tools: []tool{
		{"run_background_agent", []string{"agent", "task", "expected_output"}},
		{"list_background_agents", nil},
		{"view_background_agent", []string{"task_id"}},
		{"stop_background_agent", []string{"task_id"}},
		{"wait_background_agents", []string{"task_ids", "timeout"}},
	}},
}

// cagent features hitl does not implement: named so the error can say
// "not supported by hitl" instead of "unknown".
var (
	unsupportedToolsets = []string{"a2a", "lsp", "transfer_task", "rag", "tasks", "user_prompt_v2", "handoff", "skills", "deferred"}
	// cagent toolset keys hitl implements on no type.
	unsupportedToolKeys = []string{"sandbox", "env_file", "file_types"}
	remoteToolKeys      = []string{"name", "description", "parameters"}
	postEditKeys        = []string{"path", "cmd"}
	mcpRemoteKeys       = []string{"url", "transport_type", "headers"}
	scriptCommandKeys   = []string{"cmd", "description", "args", "required", "env", "working_dir"}
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

// keyOwners names the toolset types that take key, for the error about a
// key used on the wrong type.
func keyOwners(key string) []string {
	var owners []string
	for _, t := range supportedTypes() {
		if contains(toolsetTypes[t].keys, key) {
			owners = append(owners, t)
		}
	}
	return owners
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
	switch {
	case ok:
	case contains(unsupportedToolsets, ts.Type):
		l.errorf(typeNode, "toolset type %q is not supported by hitl; supported types: %s", ts.Type, strings.Join(supportedTypes(), ", "))
		return nil
	default:
		l.errorf(typeNode, "unknown toolset type %q%s; supported types: %s", ts.Type, didYouMean(ts.Type, supportedTypes()), strings.Join(supportedTypes(), ", "))
		return nil
	}
	if ts.Type == "filesystem" {
		ts.IgnoreVCS = true
	}
	defer func() {
		if ts.Type == "api" && ts.API == nil {
			l.errorf(n, "an api toolset needs api_config: {name, endpoint, method, args}")
		}
	}()
	// instruction, model, defer and toon are cagent's keys of every toolset.
	known := append([]string{"type", "instruction", "model", "defer", "toon"}, tt.keys...)
	var filterNode, refNode, remoteNode, versionNode, configNode *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if seen[key] {
			l.errorf(k, "%s toolset key %q appears twice", ts.Type, key)
			continue
		}
		seen[key] = true
		if !contains(known, key) {
			l.badToolsetKey(ts.Type, k, known)
			continue
		}
		switch key {
		case "instruction":
			ts.Instruction = l.str(v)
		case "model":
			ts.ModelRef, ts.modelNode = l.str(v), v
		case "models":
			ts.PickRefs = l.strings(v)
			if v.Kind == yaml.SequenceNode {
				ts.pickNodes = v.Content
			}
		case "defer":
			l.deferKey(ts, v)
		case "toon":
			ts.Toon = l.str(v)
			if err := l.checks.toolNames(ts.Toon); err != nil {
				l.errorf(v, "toon: %v", err)
			}
		case "api_config":
			ts.API = l.apiConfig(v)
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
			if ts.Type == "script" {
				ts.Scripts = l.scriptCommands(v)
			} else {
				ts.Shell = l.str(v)
			}
		case "url":
			ts.URL = l.expand(v, l.str(v))
		case "tools":
			if ts.Type == "remote" {
				ts.Tools = l.remoteTools(v)
			} else {
				filterNode = v
				ts.Filter = l.strings(v)
			}
		case "headers":
			ts.Headers = l.stringMap(v, true)
		case "callback_host":
			ts.CallbackHost = l.str(v)
		case "allow_response_hosts":
			ts.AllowResponseHosts = l.strings(v)
		case "command":
			ts.Command = l.str(v) // as cagent: command and args are not expanded
		case "args":
			ts.Args = l.strings(v)
		case "ref":
			refNode = v
		case "version":
			versionNode = v
			ts.Version = strings.TrimSpace(l.str(v))
		case "config":
			configNode = v
			ts.GatewayConfig = l.jsonValue(v)
		case "remote":
			remoteNode = v
			l.mcpRemote(ts, v)
		case "ignore_vcs":
			ts.IgnoreVCS = l.boolean(v)
		case "post_edit":
			ts.PostEdit = l.postEdit(v)
		case "allowed_directories":
			ts.AllowedDirs = l.expandAll(v, l.strings(v))
		case "shared":
			ts.Shared = l.boolean(v)
		case "path":
			ts.Path = l.expand(v, l.str(v))
		}
	}
	switch ts.Type {
	case "remote":
		if ts.URL == "" {
			l.errorf(n, "remote toolset has no url: the tool server's invocation endpoint")
		}
		if len(ts.Tools) == 0 {
			l.errorf(n, "remote toolset declares no tools:")
		}
	case "mcp":
		l.mcpSource(ts, n, refNode, remoteNode)
		if versionNode != nil && ts.Command == "" {
			l.errorf(versionNode, "version names the package that provides a stdio server's command; this server has no command")
		}
		if configNode != nil && ts.Docker == "" {
			l.errorf(configNode, "config is handed to Docker's MCP gateway, for a server of ref: docker:NAME; give a command's server its settings in args or env")
		}
	case "openapi":
		if ts.URL == "" {
			l.errorf(n, "an openapi toolset needs url: the OpenAPI document (an http(s) URL, or a file path from the agent file's directory)")
		} else if !strings.HasPrefix(ts.URL, "http://") && !strings.HasPrefix(ts.URL, "https://") && !filepath.IsAbs(ts.URL) {
			ts.URL = filepath.Join(filepath.Dir(l.file), ts.URL)
		}
	case "model_picker":
		if len(ts.PickRefs) == 0 {
			l.errorf(n, "a model_picker toolset needs models: the models change_model may switch to")
		}
	case "script":
		if len(ts.Scripts) == 0 {
			l.errorf(n, "script toolset has no shell: map of commands (name: {cmd: ..., description: ...})")
		}
	}
	if filterNode != nil && ts.Type != "mcp" {
		l.checkFilter(ts, filterNode)
	}
	if ts.Type != "mcp" {
		l.checkDefer(ts)
	}
	return ts
}

// deferKey reads defer: true (every tool of the toolset), false, or a list
// of its tools' names.
func (l *loader) deferKey(ts *Toolset, v *yaml.Node) {
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!bool":
		ts.DeferAll = l.boolean(v)
	case v.Kind == yaml.SequenceNode:
		ts.DeferTools = l.strings(v)
		for _, item := range v.Content {
			ts.DeferPos = append(ts.DeferPos, pos(item))
		}
	default:
		l.errorf(v, "defer: expected true (all the toolset's tools), false, or a list of its tools' names, got %s", kindName(v))
	}
}

// checkDefer checks the names of a toolset's defer: list against the tools
// it gives the model (an mcp server's are checked when it answers).
func (l *loader) checkDefer(ts *Toolset) {
	names := ts.ToolNames()
	list := strings.Join(names, ", ")
	if list == "" {
		list = "(none)"
	}
	for i, name := range ts.DeferTools {
		if !contains(names, name) {
			at := ts.DeferPos[i]
			l.errs = append(l.errs, &Error{File: l.file, Pos: at, Msg: fmt.Sprintf(
				"defer: %s toolset has no tool %q%s; the tools it gives the model: %s", ts.Type, name, didYouMean(name, names), list)})
		}
	}
}

// Defers reports whether the toolset's tool name is deferred (defer:).
func (ts *Toolset) Defers(name string) bool {
	return ts.DeferAll || contains(ts.DeferTools, name)
}

// HasDefer reports whether the toolset defers any of its tools.
func (ts *Toolset) HasDefer() bool {
	return ts.DeferAll || len(ts.DeferTools) > 0
}

// badToolsetKey reports a key the toolset's type does not take: a cagent
// key hitl implements nowhere is "not supported by hitl", a key of another
// type says whose it is, anything else is unknown with a did-you-mean.
func (l *loader) badToolsetKey(typ string, k *yaml.Node, known []string) {
	key := k.Value
	switch owners := keyOwners(key); {
	case contains(unsupportedToolKeys, key):
		l.errorf(k, "%s toolset key %q is not supported by hitl; %s toolsets take: %s", typ, key, typ, strings.Join(known, ", "))
	case len(owners) > 0:
		l.errorf(k, "%s toolset key %q belongs to %s toolsets, not %s; %s toolsets take: %s", typ, key, strings.Join(owners, ", "), typ, typ, strings.Join(known, ", "))
	default:
		l.errorf(k, "unknown %s toolset key %q%s; expected one of: %s", typ, key, didYouMean(key, known), strings.Join(known, ", "))
	}
}

// checkFilter checks the names of a built-in toolset's tools: filter.
func (l *loader) checkFilter(ts *Toolset, n *yaml.Node) {
	var names []string
	if ts.Type == "script" {
		for _, s := range ts.Scripts {
			names = append(names, s.Name)
		}
	} else {
		for _, t := range toolsetTypes[ts.Type].tools {
			names = append(names, t.name)
		}
	}
	for i, name := range ts.Filter {
		if i < len(n.Content) && !contains(names, name) {
			l.errorf(n.Content[i], "%s toolset has no tool %q%s; its tools: %s", ts.Type, name, didYouMean(name, names), strings.Join(names, ", "))
		}
	}
}

func (l *loader) postEdit(n *yaml.Node) []PostEdit {
	return mappings(l, n, "a list of {path, cmd}", "a post_edit entry with path and cmd", func(item *yaml.Node) PostEdit {
		var p PostEdit
		l.eachKey(item, "post_edit key", postEditKeys, nil, func(key string, k, v *yaml.Node) {
			switch key {
			case "path":
				p.Path = l.str(v)
			case "cmd":
				p.Cmd = l.str(v)
			}
		})
		if p.Path == "" || p.Cmd == "" {
			l.errorf(item, "post_edit entry needs both path (a glob of the files) and cmd (the command to run)")
		}
		return p
	})
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

// ToolNames returns the names of the tools a toolset gives the model, as far
// as the file says: an mcp toolset's are known only when its server answers
// (its tools: filter, when given, names them).
func (ts *Toolset) ToolNames() []string {
	switch ts.Type {
	case "remote":
		names := make([]string, len(ts.Tools))
		for i, t := range ts.Tools {
			names[i] = t.Name
		}
		return names
	case "mcp":
		return ts.Filter
	case "api":
		if ts.API == nil {
			return nil
		}
		return []string{ts.API.Name}
	case "script":
		var names []string
		for _, s := range ts.Scripts {
			if ts.Filter == nil || contains(ts.Filter, s.Name) {
				names = append(names, s.Name)
			}
		}
		return names
	}
	if ts.Name != "" {
		return []string{ts.Name}
	}
	var names []string
	for _, t := range toolsetTypes[ts.Type].tools {
		if ts.Filter == nil || contains(ts.Filter, t.name) {
			names = append(names, t.name)
		}
	}
	return names
}

// ToolArgs returns the argument names of the toolset's tool name (as
// ToolNames gives it), and whether they are known: a remote tool without
// parameters and every mcp tool take arguments the file does not list.
func (ts *Toolset) ToolArgs(name string) ([]string, bool) {
	switch ts.Type {
	case "remote":
		for _, t := range ts.Tools {
			if t.Name == name {
				return propertyNames(t.Parameters)
			}
		}
		return nil, false
	case "mcp":
		return nil, false
	case "api":
		return HTTPRuleArgs, true
	case "script":
		for _, s := range ts.Scripts {
			if s.Name == name {
				return s.ArgNames, true
			}
		}
		return nil, false
	}
	tools := toolsetTypes[ts.Type].tools
	if ts.Name != "" && len(tools) == 1 && name == ts.Name {
		return tools[0].args, true
	}
	for _, t := range tools {
		if t.name == name {
			return t.args, true
		}
	}
	return nil, false
}

// HTTPRuleArgs are the parts of an api or openapi call rules judge; an
// openapi call's headers and cookies are header.NAME and cookie.NAME.
var HTTPRuleArgs = []string{"method", "url", "path", "query", "body"}

// httpRuleArg reports whether a rule's argument names a part of an
// openapi call.
func httpRuleArg(name string) bool {
	n := strings.ToLower(name)
	return contains(HTTPRuleArgs, n) || len(n) > 7 && strings.HasPrefix(n, "header.") || len(n) > 7 && strings.HasPrefix(n, "cookie.")
}

// ToolsetTypes lists the toolset types hitl implements, sorted.
func ToolsetTypes() []string { return supportedTypes() }

// DefaultToolNames returns the tools a toolset type gives the model by
// default (nil for remote, mcp and script, whose tools the file or the
// server names).
func DefaultToolNames(typ string) []string {
	var names []string
	for _, t := range toolsetTypes[typ].tools {
		names = append(names, t.name)
	}
	return names
}

func (l *loader) expandAll(n *yaml.Node, list []string) []string {
	for i := range list {
		at := n
		if i < len(n.Content) {
			at = n.Content[i]
		}
		list[i] = l.expand(at, list[i])
	}
	return list
}
