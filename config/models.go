package config

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// Providers hitl implements.
var Providers = []string{"openai", "anthropic", "ollama", "script"}

var (
	modelKeys            = []string{"provider", "model", "base_url", "token_key", "max_tokens", "temperature", "top_p", "thinking_budget", "script"}
	unsupportedModelKeys = []string{"parallel_tool_calls", "provider_opts", "track_usage", "frequency_penalty", "presence_penalty", "routing", "structured_output"}
	unsupportedProviders = []string{"google", "dmr", "amazon-bedrock", "mistral", "xai", "nebius", "azure", "gemini", "requesty"}
	efforts              = []string{"minimal", "low", "medium", "high"}
)

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
