package config

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// API types of a providers: entry (cagent's api_type).
const (
	APIChatCompletions = "openai_chatcompletions"
	APIResponses       = "openai_responses"
)

// APITypes are the api_type values a providers: entry or provider_opts
// may name.
var APITypes = []string{APIChatCompletions, APIResponses}

// ProviderDef is an entry of the top-level providers: map: an
// OpenAI-compatible endpoint models name as their provider.
type ProviderDef struct {
	Name     string
	APIType  string // APIChatCompletions (default) or APIResponses
	BaseURL  string
	TokenKey string // "" sends no key
	Pos      Pos
}

// ProviderOpts are the provider_opts of a model that hitl implements, as
// cagent reads them.
type ProviderOpts struct {
	// APIType (openai and providers: models) chooses Chat Completions or
	// the Responses API.
	APIType string
	// InterleavedThinking (anthropic) asks for tool calls during
	// thinking (the interleaved-thinking beta).
	InterleavedThinking bool
	// DMR (dmr): the model's configuration Docker Model Runner is sent
	// before the first turn.
	DMR *DMROpts

	apiTypeKey, interleavedKey, dmrKey *yaml.Node
}

// DMROpts are dmr's provider_opts: llama.cpp runtime flags and speculative
// decoding (a draft model proposing tokens).
type DMROpts struct {
	RuntimeFlags   []string
	DraftModel     string
	NumTokens      int
	AcceptanceRate float64
}

var providerKeys = []string{"api_type", "base_url", "token_key"}

// providers reads the top-level providers: map.
func (l *loader) providers(n *yaml.Node) map[string]*ProviderDef {
	defs := map[string]*ProviderDef{}
	if !l.want(n, yaml.MappingNode, "a mapping of provider names") {
		return defs
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if contains(Providers, name) || Presets[name] != (Preset{}) || contains(unsupportedProviders, name) {
			l.errorf(k, "providers: %q is the name of a built-in provider; choose another name", name)
		}
		d := &ProviderDef{Name: name, APIType: APIChatCompletions, Pos: pos(k)}
		defs[name] = d
		if !l.want(v, yaml.MappingNode, "a provider mapping with api_type, base_url and token_key") {
			continue
		}
		l.eachKey(v, "provider key", providerKeys, nil, func(key string, _, val *yaml.Node) {
			switch key {
			case "api_type":
				d.APIType = l.apiType(val)
			case "base_url":
				d.BaseURL = l.expand(val, l.str(val))
			case "token_key":
				d.TokenKey = l.str(val)
			}
		})
		if d.BaseURL == "" {
			l.errorf(k, "provider %s has no base_url; write the endpoint of its OpenAI-compatible API", name)
		}
	}
	return defs
}

func (l *loader) apiType(n *yaml.Node) string {
	s := l.str(n)
	if n.Kind == yaml.ScalarNode && !contains(APITypes, s) {
		l.errorf(n, "unknown api_type %q%s; valid: %s", s, didYouMean(s, APITypes), strings.Join(APITypes, ", "))
	}
	return s
}

// providerOptKeys are what cagent passes through, by provider; the ones hitl
// implements are read, the others are "not supported by hitl".
var (
	providerOptKeys            = []string{"api_type", "interleaved_thinking", "runtime_flags", "speculative_draft_model", "speculative_num_tokens", "speculative_acceptance_rate"}
	unsupportedProviderOptKeys = []string{
		"project", "location", // google: Vertex AI
		"api_version",                                        // azure
		"region", "profile", "role_arn", "role_session_name", // bedrock
		"external_id", "endpoint_url", "disable_prompt_caching",
	}
)

// providerOpts reads a model's provider_opts.
func (l *loader) providerOpts(m *Model, n *yaml.Node) {
	if !l.want(n, yaml.MappingNode, "a mapping of provider options") {
		return
	}
	// cagent passes any key through to the provider, so a key hitl does not
	// implement is "not supported by hitl", never "unknown".
	unsupported := unsupportedProviderOptKeys
	for i := 0; i+1 < len(n.Content); i += 2 {
		if key := n.Content[i].Value; !contains(providerOptKeys, key) {
			unsupported = append(unsupported, key)
		}
	}
	l.eachKey(n, "provider_opts key", providerOptKeys, unsupported, func(key string, k, v *yaml.Node) {
		switch key {
		case "api_type":
			m.ProviderOpts.APIType = l.apiType(v)
			m.ProviderOpts.apiTypeKey = k
		case "interleaved_thinking":
			m.ProviderOpts.InterleavedThinking = l.boolean(v)
			m.ProviderOpts.interleavedKey = k
		default:
			l.dmrOpt(m, key, k, v)
		}
	})
}

// checkProviderOpts rejects an option the model's provider does not take
// (it would be accepted and ignored).
func (l *loader) checkProviderOpts(m *Model) {
	o := m.ProviderOpts
	if UnsupportedProvider(m.Provider) {
		return // the provider's own error says enough
	}
	if k := o.apiTypeKey; k != nil && m.Provider != "openai" && l.providerDefs[m.Provider] == nil {
		l.errorf(k, "provider_opts api_type applies to provider openai and to providers: entries, not %q", m.Provider)
	}
	if k := o.interleavedKey; k != nil && m.Provider != "anthropic" {
		l.errorf(k, "provider_opts interleaved_thinking applies to provider anthropic, not %q", m.Provider)
	}
	if k := o.dmrKey; k != nil && m.Provider != "dmr" {
		l.errorf(k, "provider_opts %s applies to provider dmr, not %q", k.Value, m.Provider)
	}
}

// dmrOpt reads one of dmr's provider_opts (cagent's forms: runtime_flags
// a list or a string of flags split at spaces and commas).
func (l *loader) dmrOpt(m *Model, key string, k, v *yaml.Node) {
	o := &m.ProviderOpts
	if o.DMR == nil {
		o.DMR = &DMROpts{}
	}
	o.dmrKey = k
	switch key {
	case "runtime_flags":
		if v.Kind == yaml.SequenceNode {
			o.DMR.RuntimeFlags = l.strings(v)
		} else {
			o.DMR.RuntimeFlags = strings.Fields(strings.ReplaceAll(l.scalar(v), ",", " "))
		}
	case "speculative_draft_model":
		o.DMR.DraftModel = l.str(v)
	case "speculative_num_tokens":
		o.DMR.NumTokens = int(l.integer(v, 1))
	case "speculative_acceptance_rate":
		if f := l.float(v); f != nil {
			if *f < 0 || *f > 1 {
				l.errorf(v, "speculative_acceptance_rate is between 0 and 1, got %v", *f)
			}
			o.DMR.AcceptanceRate = *f
		}
	}
}

// modelKey reads the model keys of this file: the penalties and
// provider_opts.
func (l *loader) modelKey(m *Model, key string, v *yaml.Node) {
	switch key {
	case "frequency_penalty":
		m.FrequencyPenalty = l.penalty(v)
	case "presence_penalty":
		m.PresencePenalty = l.penalty(v)
	case "provider_opts":
		l.providerOpts(m, v)
	case "routing":
		l.routing(m, v)
	}
}

// penalty is a frequency or presence penalty, -2 to 2 as the APIs take it.
func (l *loader) penalty(n *yaml.Node) *float64 {
	f := l.float(n)
	if f != nil && (*f < -2 || *f > 2) {
		l.errorf(n, "a penalty is between -2 and 2, got %v", *f)
	}
	return f
}

// applyProviderDef fills a model whose provider is a providers: entry:
// its base URL and key variable where the model leaves them unset, and the
// API its api_type names (provider_opts api_type wins, as in cagent).
func (l *loader) applyProviderDef(m *Model) bool {
	d, ok := l.providerDefs[m.Provider]
	if !ok {
		return false
	}
	if m.BaseURL == "" {
		m.BaseURL = d.BaseURL
	}
	if m.TokenKey == "" {
		m.TokenKey = d.TokenKey
	}
	m.Custom = true
	m.API = "openai"
	if t := m.ProviderOpts.APIType; t != "" {
		m.API = apiOf(t)
	} else {
		m.API = apiOf(d.APIType)
	}
	return true
}

// ResponsesOnly reports whether an OpenAI model is served only by the
// Responses API (the codex and pro models), so provider openai speaks
// that API to it unless provider_opts api_type says otherwise.
func ResponsesOnly(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return strings.Contains(m, "codex") || strings.HasSuffix(m, "-pro") || strings.Contains(m, "-pro-")
}

// apiOf is the client an api_type names.
func apiOf(apiType string) string {
	if apiType == APIResponses {
		return APIResponses
	}
	return "openai"
}
