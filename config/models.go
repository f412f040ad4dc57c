package config

import (
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Providers hitl implements with its own clients.
var Providers = []string{"openai", "anthropic", "google", "ollama", "script"}

// Preset is an OpenAI-compatible provider with a known endpoint: it runs
// through the openai client with BaseURL and the key in TokenKey (none
// when empty). From cagent's provider aliases, plus dmr (Docker Model
// Runner on the host).
type Preset struct {
	BaseURL  string
	TokenKey string
}

// Presets are the OpenAI-compatible providers hitl accepts by name.
var Presets = map[string]Preset{
	"dmr":      {BaseURL: "http://127.0.0.1:12434/engines/v1"},
	"mistral":  {BaseURL: "https://api.mistral.ai/v1", TokenKey: "MISTRAL_API_KEY"},
	"xai":      {BaseURL: "https://api.x.ai/v1", TokenKey: "XAI_API_KEY"},
	"nebius":   {BaseURL: "https://api.studio.nebius.com/v1", TokenKey: "NEBIUS_API_KEY"},
	"requesty": {BaseURL: "https://router.requesty.ai/v1", TokenKey: "REQUESTY_API_KEY"},
	"minimax":  {BaseURL: "https://api.minimax.io/v1", TokenKey: "MINIMAX_API_KEY"},
}

var (
	modelKeys            = []string{"provider", "model", "base_url", "token_key", "max_tokens", "temperature", "top_p", "thinking_budget", "script", "frequency_penalty", "presence_penalty", "provider_opts", "routing"}
	unsupportedModelKeys = []string{"parallel_tool_calls", "track_usage", "structured_output", "env", "type"}
	unsupportedProviders = []string{"amazon-bedrock", "azure", "gemini", "vertex", "bedrock"}
	// efforts are cagent's thinking_budget words (besides none).
	efforts = []string{"minimal", "low", "medium", "high"}
)

// UnsupportedProvider reports whether p is a cagent provider hitl does not
// implement (an error that says "not supported by hitl", never "unknown").
func UnsupportedProvider(p string) bool { return contains(unsupportedProviders, p) }

// knownProviders lists every provider name the file may use, sorted.
func knownProviders() []string {
	list := append([]string(nil), Providers...)
	for p := range Presets {
		list = append(list, p)
	}
	sort.Strings(list)
	return list
}

// ApplyPreset fills a model's API and, for a preset provider, the base URL
// and key variable it leaves unset. Load does it for every model; a model
// built elsewhere (a --model override) calls it too.
func ApplyPreset(m *Model) {
	p, ok := Presets[m.Provider]
	if !ok {
		m.API = m.Provider
		switch {
		case m.Provider == "openai" && m.ProviderOpts.APIType != "":
			m.API = apiOf(m.ProviderOpts.APIType)
		case m.Provider == "openai" && ResponsesOnly(m.Model):
			m.API = APIResponses
		}
		return
	}
	m.API = "openai"
	if m.BaseURL == "" {
		m.BaseURL = p.BaseURL
	}
	if m.TokenKey == "" {
		m.TokenKey = p.TokenKey
	}
}

func (l *loader) model(name string, n *yaml.Node) *Model {
	m := &Model{Name: name, Pos: pos(n)}
	if !l.want(n, yaml.MappingNode, "a model mapping with provider and model") {
		return m
	}
	var providerNode, modelNode *yaml.Node
	l.eachKey(n, "model key", modelKeys, unsupportedModelKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "provider":
			providerNode = v
			m.Provider = l.str(v)
		case "model":
			modelNode = v
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
		default:
			l.modelKey(m, key, v)
		}
	})
	if providerNode == nil && modelNode != nil && strings.Contains(m.Model, ",") {
		// An alloy model (cagent: no provider, comma-joined models);
		// resolved when an agent names it.
		m.alloyRef = m.Model
		return m
	}
	if providerNode == nil {
		l.errorf(n, "model %s has no provider; expected one of: %s", name, strings.Join(knownProviders(), ", "))
	} else {
		l.checkProvider(providerNode, m.Provider)
	}
	if modelNode != nil && strings.Contains(m.Model, ",") {
		l.errorf(modelNode, "model %q: with a provider, model names one model; for an alloy (models taking turns) leave provider out", m.Model)
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
	l.checkProviderOpts(m)
	if !l.applyProviderDef(m) {
		ApplyPreset(m)
	}
	return m
}

func (l *loader) checkProvider(n *yaml.Node, p string) {
	switch {
	case contains(Providers, p):
	case Presets[p] != Preset{}:
	case contains(unsupportedProviders, p):
		l.errorf(n, "provider %q is not supported by hitl; supported: %s", p, strings.Join(knownProviders(), ", "))
	case l.providerDefs[p] != nil:
	default:
		l.errorf(n, "unknown provider %q%s; supported: %s", p, didYouMean(p, knownProviders()), strings.Join(knownProviders(), ", "))
	}
}

// thinkingBudget reads cagent's forms: none, an effort word, a number of
// tokens (0 turns thinking off, -1 is the provider's dynamic budget), or a
// mapping {effort: WORD} / {tokens: N}.
func (l *loader) thinkingBudget(n *yaml.Node) *ThinkingBudget {
	if n.Kind == yaml.MappingNode {
		var tb *ThinkingBudget
		l.eachKey(n, "thinking_budget key", []string{"effort", "tokens"}, nil, func(key string, k, v *yaml.Node) {
			if tb != nil {
				l.errorf(k, "thinking_budget takes one of effort and tokens, not both")
				return
			}
			if key == "effort" && v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
				l.errorf(v, "thinking_budget effort: expected one of none, %s, got a number (use tokens:)", strings.Join(efforts, ", "))
				return
			}
			if key == "tokens" && (v.Kind != yaml.ScalarNode || v.Tag != "!!int") {
				l.errorf(v, "thinking_budget tokens: expected a number of tokens, -1 or 0")
				return
			}
			tb = l.thinkingBudget(v)
		})
		if tb == nil && len(n.Content) == 0 {
			l.errorf(n, "thinking_budget mapping is empty; write {effort: low} or {tokens: 2048}")
		}
		return tb
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		t := l.integer(n, -1)
		return &ThinkingBudget{Tokens: t, Disabled: t == 0}
	}
	s := l.str(n)
	switch {
	case s == "none":
		return &ThinkingBudget{Disabled: true}
	case !contains(efforts, s):
		l.errorf(n, "thinking_budget %q: expected none, a number of tokens (-1: dynamic, 0: off) or one of: %s", s, strings.Join(efforts, ", "))
	}
	return &ThinkingBudget{Effort: s}
}
