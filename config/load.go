package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/hitl-dev/hitl/exec/permissions/rule"
	"gopkg.in/yaml.v3"
)

// Providers hitl implements.
var Providers = []string{"openai", "anthropic", "ollama", "script"}

// ToolsetTypes hitl implements, with the keys each accepts besides "type".
var ToolsetTypes = map[string][]string{
	"user_prompt":       {"name"},
	"ask_user_question": {"name"},
	"ask_user":          {"name"},
	"interaction":       {},
	"remote":            {"url", "tools", "timeout", "headers", "callback_host", "allow_response_hosts"},
	"shell":             {"env", "timeout", "working_dir", "shell"},
	"verdict":           {"required"},
}

// cagent features hitl does not implement: named so the error can say
// "not supported by hitl" instead of "unknown".
var (
	unsupportedTopKeys   = []string{"rag", "mcps", "providers"}
	unsupportedAgentKeys = []string{"sub_agents", "handoffs", "rag", "hooks", "structured_output", "add_prompt_files", "skills", "fallback", "num_history_items", "max_consecutive_tool_calls", "code_mode_tools", "mcps", "add_description_parameter"}
	unsupportedModelKeys = []string{"parallel_tool_calls", "provider_opts", "track_usage", "frequency_penalty", "presence_penalty", "routing", "structured_output"}
	unsupportedToolsets  = []string{"filesystem", "mcp", "fetch", "think", "todo", "memory", "script", "api", "a2a", "lsp", "background_agents", "transfer_task", "rag", "openapi", "tasks", "user_prompt_v2"}
	unsupportedProviders = []string{"google", "dmr", "amazon-bedrock", "mistral", "xai", "nebius", "azure", "gemini", "requesty"}
	unsupportedToolKeys  = []string{"instruction", "defer", "ref", "command", "args", "config", "toon", "sandbox", "post_edit", "models", "remote"}
)

var (
	topKeys        = []string{"version", "models", "agents", "permissions", "metadata"}
	modelKeys      = []string{"provider", "model", "base_url", "token_key", "max_tokens", "temperature", "top_p", "thinking_budget", "script"}
	agentKeys      = []string{"model", "description", "instruction", "max_iterations", "add_date", "add_environment_info", "welcome_message", "commands", "toolsets"}
	permissionKeys = []string{"allow", "ask", "deny"}
	scriptKeys     = []string{"text", "when", "tool_calls"}
	scriptCallKeys = []string{"name", "arguments", "arguments_json"}
	remoteToolKeys = []string{"name", "description", "parameters"}
	efforts        = []string{"minimal", "low", "medium", "high"}
)

// Load reads and validates the agent file at path. ${VAR} references are
// resolved with lookup (os.LookupEnv when nil). The error, when not nil, is
// Errors (every problem of the file) or a read error.
func Load(path string, lookup func(string) (string, bool)) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, Errors{{File: path, Msg: "cannot read the agent file: " + err.Error()}}
	}
	return Parse(path, data, lookup)
}

// Parse validates data as the agent file named path.
func Parse(path string, data []byte, lookup func(string) (string, bool)) (*Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	sum := sha256.Sum256(data)
	l := &loader{file: path, lookup: lookup, cfg: &Config{Path: path, SHA256: hex.EncodeToString(sum[:])}}
	l.parse(data)
	if len(l.errs) > 0 {
		return nil, l.errs.sorted()
	}
	return l.cfg, nil
}

type loader struct {
	file   string
	lookup func(string) (string, bool)
	cfg    *Config
	errs   Errors
}

func pos(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

func (l *loader) errorf(n *yaml.Node, format string, args ...any) {
	p := Pos{1, 1}
	if n != nil {
		p = pos(n)
	}
	l.errs = append(l.errs, &Error{File: l.file, Pos: p, Msg: fmt.Sprintf(format, args...)})
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func (l *loader) parse(data []byte) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := 1
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = yamlLine.ReplaceAllString(msg, "")
		msg = strings.TrimPrefix(strings.TrimSpace(msg), ": ")
		l.errs = append(l.errs, &Error{File: l.file, Pos: Pos{line, 1}, Msg: "not valid YAML: " + msg})
		return
	}
	if len(doc.Content) == 0 {
		l.errorf(nil, "the file is empty: expected a mapping with agents:")
		return
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		l.errorf(root, "expected a mapping with agents:, got %s", kindName(root))
		return
	}
	var agentsNode, modelsNode *yaml.Node
	l.eachKey(root, "top-level key", topKeys, unsupportedTopKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "version":
			l.cfg.Version = l.scalar(v)
		case "models":
			modelsNode = v
		case "agents":
			agentsNode = v
		case "permissions":
			l.permissions(v)
		case "metadata":
			var m any
			_ = v.Decode(&m)
			l.cfg.Metadata = m
		}
	})
	models := map[string]*Model{}
	if modelsNode != nil && l.want(modelsNode, yaml.MappingNode, "a mapping of model names") {
		for i := 0; i+1 < len(modelsNode.Content); i += 2 {
			k, v := modelsNode.Content[i], modelsNode.Content[i+1]
			m := l.model(k.Value, v)
			models[k.Value] = m
			l.cfg.Models = append(l.cfg.Models, m)
		}
	}
	if agentsNode == nil {
		l.errorf(root, "no agents: an agent file needs at least one agent under agents:")
		return
	}
	if !l.want(agentsNode, yaml.MappingNode, "a mapping of agent names") {
		return
	}
	if len(agentsNode.Content) == 0 {
		l.errorf(agentsNode, "agents: is empty; define at least one agent")
	}
	for i := 0; i+1 < len(agentsNode.Content); i += 2 {
		k, v := agentsNode.Content[i], agentsNode.Content[i+1]
		l.cfg.Agents = append(l.cfg.Agents, l.agent(k, v, models))
	}
}

// eachKey walks a mapping, reporting unknown and unsupported keys, and calls
// f for the known ones.
func (l *loader) eachKey(n *yaml.Node, what string, known, unsupported []string, f func(key string, k, v *yaml.Node)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		switch {
		case seen[key]:
			l.errorf(k, "%s %q appears twice", what, key)
		case contains(known, key):
			f(key, k, v)
		case contains(unsupported, key):
			l.errorf(k, "%s %q is not supported by hitl", what, key)
		default:
			l.errorf(k, "unknown %s %q%s; expected one of: %s", what, key, didYouMean(key, known), strings.Join(known, ", "))
		}
		seen[key] = true
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!null":
		return "nothing"
	case "!!bool":
		return "a boolean"
	case "!!int", "!!float":
		return "a number"
	}
	return "a string"
}

func (l *loader) want(n *yaml.Node, kind yaml.Kind, what string) bool {
	if n.Kind == kind {
		return true
	}
	l.errorf(n, "expected %s, got %s", what, kindName(n))
	return false
}

// scalar returns a scalar's text, reporting anything else.
func (l *loader) scalar(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.errorf(n, "expected a string, got %s", kindName(n))
		return ""
	}
	return n.Value
}

func (l *loader) str(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		l.errorf(n, "expected a string, got %s", kindName(n))
		return ""
	}
	return n.Value
}

func (l *loader) boolean(n *yaml.Node) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		l.errorf(n, "expected true or false, got %s", kindName(n))
	}
	return b
}

func (l *loader) integer(n *yaml.Node, min int64) int64 {
	var i int64
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		l.errorf(n, "expected a whole number, got %s", kindName(n))
		return 0
	}
	if i < min {
		l.errorf(n, "expected a number of at least %d, got %d", min, i)
	}
	return i
}

func (l *loader) float(n *yaml.Node) *float64 {
	var f float64
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
		l.errorf(n, "expected a number, got %s", kindName(n))
		return nil
	}
	return &f
}

func (l *loader) strings(n *yaml.Node) []string {
	if !l.want(n, yaml.SequenceNode, "a list of strings") {
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		out = append(out, l.str(item))
	}
	return out
}

func (l *loader) stringMap(n *yaml.Node, expand bool) map[string]string {
	if !l.want(n, yaml.MappingNode, "a mapping of strings") {
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := n.Content[i+1]
		s := l.scalar(v)
		if expand {
			s = l.expand(v, s)
		}
		out[n.Content[i].Value] = s
	}
	return out
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${VAR} in s; an unset variable is an error naming it.
func (l *loader) expand(n *yaml.Node, s string) string {
	return varRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v, ok := l.lookup(name)
		if !ok {
			l.errorf(n, "environment variable %s is not set (used as ${%s}); set it or remove the reference", name, name)
		}
		return v
	})
}

func (l *loader) duration(n *yaml.Node) time.Duration {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		return time.Duration(l.integer(n, 1)) * time.Second
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		d, err := time.ParseDuration(n.Value)
		if err == nil && d > 0 {
			return d
		}
	}
	l.errorf(n, "expected a timeout in seconds (120) or a duration (\"90s\", \"10m\"), got %q", n.Value)
	return 0
}

func (l *loader) permissions(n *yaml.Node) {
	if !l.want(n, yaml.MappingNode, "a mapping with allow, ask, deny") {
		return
	}
	p := &l.cfg.Permissions
	l.eachKey(n, "permissions key", permissionKeys, nil, func(key string, k, v *yaml.Node) {
		list := l.strings(v)
		for i, text := range list {
			if _, err := rule.Parse(text); err != nil {
				l.errorf(v.Content[i], "permissions.%s: %v", key, err)
			}
		}
		switch key {
		case "allow":
			p.Allow = list
		case "ask":
			p.Ask = list
		case "deny":
			p.Deny = list
		}
	})
}

func (l *loader) model(name string, n *yaml.Node) *Model {
	m := &Model{Name: name, Pos: pos(n)}
	if !l.want(n, yaml.MappingNode, "a model mapping with provider and model") {
		return m
	}
	var providerNode *yaml.Node
	l.eachKey(n, "model key", modelKeys, unsupportedModelKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "provider":
			providerNode = v
			m.Provider = l.str(v)
		case "model":
			m.Model = l.scalar(v)
		case "base_url":
			m.BaseURL = l.expand(v, l.str(v))
		case "token_key":
			m.TokenKey = l.str(v)
		case "max_tokens":
			t := l.integer(v, 1)
			m.MaxTokens = &t
		case "temperature":
			m.Temperature = l.float(v)
		case "top_p":
			m.TopP = l.float(v)
		case "thinking_budget":
			m.ThinkingBudget = l.thinkingBudget(v)
		case "script":
			m.Script = l.script(v)
		}
	})
	if providerNode == nil {
		l.errorf(n, "model %s has no provider; expected one of: %s", name, strings.Join(Providers, ", "))
	} else {
		l.checkProvider(providerNode, m.Provider)
	}
	if m.Model == "" && m.Provider != "script" {
		l.errorf(n, "model %s has no model: name the provider's model (e.g. gpt-4o-mini)", name)
	}
	if m.Provider == "script" && m.Script != nil && len(m.Script) == 0 {
		l.errorf(n, "model %s has an empty script: list; add at least one entry (e.g. - text: hello)", name)
	}
	if m.Provider == "script" && m.Script == nil {
		l.errorf(n, "model %s has provider script but no script: list", name)
	}
	if m.Script != nil && m.Provider != "script" {
		l.errorf(n, "model %s has a script: list, which only provider script uses", name)
	}
	return m
}

func (l *loader) checkProvider(n *yaml.Node, p string) {
	switch {
	case contains(Providers, p):
	case contains(unsupportedProviders, p):
		l.errorf(n, "provider %q is not supported by hitl; supported: %s", p, strings.Join(Providers, ", "))
	default:
		l.errorf(n, "unknown provider %q%s; supported: %s", p, didYouMean(p, Providers), strings.Join(Providers, ", "))
	}
}

func (l *loader) thinkingBudget(n *yaml.Node) *ThinkingBudget {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		return &ThinkingBudget{Tokens: l.integer(n, 0)}
	}
	s := l.str(n)
	if !contains(efforts, s) {
		l.errorf(n, "thinking_budget %q: expected a number of tokens or one of: %s", s, strings.Join(efforts, ", "))
	}
	return &ThinkingBudget{Effort: s}
}

// mappings walks a list of mappings, reporting anything else in it, and
// returns what item makes of each mapping.
func mappings[T any](l *loader, n *yaml.Node, list, item string, f func(m *yaml.Node) T) []T {
	if !l.want(n, yaml.SequenceNode, list) {
		return nil
	}
	out := []T{}
	for _, m := range n.Content {
		if l.want(m, yaml.MappingNode, item) {
			out = append(out, f(m))
		}
	}
	return out
}

func (l *loader) script(n *yaml.Node) []ScriptEntry {
	return mappings(l, n, "a list of assistant turns", "a script entry with text and/or tool_calls", func(item *yaml.Node) ScriptEntry {
		e := ScriptEntry{Pos: pos(item)}
		l.eachKey(item, "script key", scriptKeys, nil, func(key string, k, v *yaml.Node) {
			switch key {
			case "text":
				e.Text = l.scalar(v)
				l.template(v, e.Text)
			case "when":
				e.When = l.scalar(v)
				l.template(v, e.When)
			case "tool_calls":
				e.ToolCalls = l.scriptCalls(v)
			}
		})
		if e.Text == "" && len(e.ToolCalls) == 0 {
			l.errorf(item, "script entry has neither text nor tool_calls")
		}
		return e
	})
}

func (l *loader) scriptCalls(n *yaml.Node) []ScriptCall {
	return mappings(l, n, "a list of tool calls", "a tool call with name and arguments", func(item *yaml.Node) ScriptCall {
		c := ScriptCall{Pos: pos(item)}
		l.eachKey(item, "tool call key", scriptCallKeys, nil, func(key string, k, v *yaml.Node) {
			switch key {
			case "name":
				c.Name = l.str(v)
			case "arguments":
				c.Arguments = l.jsonValue(v)
				l.templates(v)
			case "arguments_json":
				c.ArgumentsJSON = l.str(v)
				l.template(v, c.ArgumentsJSON)
			}
		})
		if c.Name == "" {
			l.errorf(item, "tool call has no name")
		}
		if c.Arguments != nil && c.ArgumentsJSON != "" {
			l.errorf(item, "tool call has both arguments and arguments_json; use one")
		}
		return c
	})
}

// template reports a script template that does not parse (the script model
// renders text, when, arguments_json and the strings of arguments), so it is
// a config error at its position rather than a failure mid-run.
func (l *loader) template(n *yaml.Node, text string) {
	if !strings.Contains(text, "{{") {
		return
	}
	if _, err := template.New("script").Option("missingkey=error").Parse(text); err != nil {
		msg := strings.TrimPrefix(err.Error(), "template: script:")
		if line, rest, ok := strings.Cut(msg, ": "); ok {
			msg = rest + " (line " + line + " of the template)"
		}
		l.errorf(n, "not a valid template: %s", msg)
	}
}

// templates checks the templates in the string values of n.
func (l *loader) templates(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		l.template(n, n.Value)
	}
	for _, c := range n.Content {
		l.templates(c)
	}
}

// jsonValue converts a YAML value to JSON.
func (l *loader) jsonValue(n *yaml.Node) json.RawMessage {
	var v any
	if err := n.Decode(&v); err != nil {
		l.errorf(n, "cannot read value: %v", err)
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		l.errorf(n, "cannot be expressed as JSON (mapping keys must be strings): %v", err)
		return nil
	}
	return data
}

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
	types := make([]string, 0, len(ToolsetTypes))
	for t := range ToolsetTypes {
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
	keys, ok := ToolsetTypes[ts.Type]
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
	switch ts.Type {
	case "ask_user_question":
		return []string{"AskUserQuestion"}
	case "interaction":
		return []string{"ask_confirmation", "ask_question"}
	case "remote":
		names := make([]string, len(ts.Tools))
		for i, t := range ts.Tools {
			names[i] = t.Name
		}
		return names
	}
	return []string{ts.Type}
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
