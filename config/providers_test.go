package config

import (
	"strings"
	"testing"
)

// providers: entries, provider_opts and the penalties as the loader reads
// them.
func TestProvidersAndModelKeys(t *testing.T) {
	src := `providers:
  gw:
    api_type: openai_chatcompletions
    base_url: https://gw.example/v1
    token_key: GW_KEY
  resp:
    api_type: openai_responses
    base_url: https://resp.example/v1
models:
  a: {provider: gw, model: gpt-4o, frequency_penalty: 0.5, presence_penalty: -1}
  b: {provider: resp, model: gpt-5}
  c: {provider: openai, model: gpt-5, provider_opts: {api_type: openai_responses}}
  d: {provider: anthropic, model: claude, provider_opts: {interleaved_thinking: true}}
  e: {provider: google, model: gemini-2.5-flash}
agents:
  root: {model: a}
  other: {model: resp/gpt-5-mini}
`
	cfg, err := parse("a.yaml", []byte(src), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*Model{}
	for _, x := range cfg.Models {
		m[x.Name] = x
	}
	if a := m["a"]; a.API != "openai" || a.BaseURL != "https://gw.example/v1" || a.TokenKey != "GW_KEY" || *a.FrequencyPenalty != 0.5 || *a.PresencePenalty != -1 {
		t.Errorf("a: %+v", a)
	}
	if b := m["b"]; b.API != APIResponses || b.BaseURL != "https://resp.example/v1" || b.TokenKey != "" {
		t.Errorf("b: %+v", b)
	}
	if c := m["c"]; c.API != APIResponses {
		t.Errorf("c: %+v", c)
	}
	if d := m["d"]; !d.ProviderOpts.InterleavedThinking {
		t.Errorf("d: %+v", d)
	}
	if e := m["e"]; e.API != "google" {
		t.Errorf("e: %+v", e)
	}
	if o := cfg.Agents[1].Model; o.API != APIResponses || o.BaseURL != "https://resp.example/v1" || o.Model != "gpt-5-mini" {
		t.Errorf("inline: %+v", o)
	}
}

func TestProvidersErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"unknown api_type", "providers:\n  gw: {api_type: openai_chat, base_url: http://x}\nagents:\n  root: {model: gw/m}\n",
			`a.yaml:2:18: unknown api_type "openai_chat"`},
		{"api_type lists valid", "providers:\n  gw: {api_type: bogus, base_url: http://x}\nagents:\n  root: {model: gw/m}\n",
			"valid: openai_chatcompletions, openai_responses"},
		{"no base_url", "providers:\n  gw: {token_key: K}\nagents:\n  root: {model: gw/m}\n", "a.yaml:2:3: provider gw has no base_url"},
		{"built-in name", "providers:\n  openai: {base_url: http://x}\nagents:\n  root: {model: openai/m}\n", "name of a built-in provider"},
		{"penalty range", "models:\n  m: {provider: openai, model: x, presence_penalty: 3}\nagents:\n  root: {model: m}\n", "a.yaml:2:53: a penalty is between -2 and 2"},
		{"interleaved on openai", "models:\n  m: {provider: openai, model: x, provider_opts: {interleaved_thinking: true}}\nagents:\n  root: {model: m}\n",
			`provider_opts interleaved_thinking applies to provider anthropic, not "openai"`},
		{"api_type on anthropic", "models:\n  m: {provider: anthropic, model: x, provider_opts: {api_type: openai_responses}}\nagents:\n  root: {model: m}\n",
			"provider_opts api_type applies to provider openai"},
		{"provider_opts api_type", "models:\n  m: {provider: openai, model: x, provider_opts: {api_type: chat}}\nagents:\n  root: {model: m}\n", `unknown api_type "chat"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse("a.yaml", []byte(c.src), noEnv)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v\nwant %q", err, c.want)
			}
		})
	}
}

// The codex and pro models exist only in the Responses API: provider
// openai speaks it to them; api_type openai_chatcompletions overrides.
func TestResponsesOnlyModels(t *testing.T) {
	for model, want := range map[string]string{"gpt-5-codex": APIResponses, "gpt-5.2-pro": APIResponses, "o1-pro-2025-03-19": APIResponses,
		"gpt-5": "openai", "gpt-4o": "openai", "gpt-5-mini": "openai"} {
		m := &Model{Provider: "openai", Model: model}
		ApplyPreset(m)
		if m.API != want {
			t.Errorf("%s: API %q, want %q", model, m.API, want)
		}
	}
	m := &Model{Provider: "openai", Model: "gpt-5-codex", ProviderOpts: ProviderOpts{APIType: APIChatCompletions}}
	if ApplyPreset(m); m.API != "openai" {
		t.Errorf("api_type override: %q", m.API)
	}
}

// dmr's provider_opts in cagent's forms; on another provider an error.
func TestDMRProviderOpts(t *testing.T) {
	src := "models:\n  q: {provider: dmr, model: ai/qwen3, provider_opts: {runtime_flags: \"-ub 1024, --temp 0.5\", speculative_draft_model: ai/small, speculative_num_tokens: 16, speculative_acceptance_rate: 0.8}}\nagents:\n  root: {model: q}\n"
	cfg, err := parse("a.yaml", []byte(src), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := DMROpts{RuntimeFlags: []string{"-ub", "1024", "--temp", "0.5"}, DraftModel: "ai/small", NumTokens: 16, AcceptanceRate: 0.8}
	if got := cfg.Models[0].ProviderOpts.DMR; got == nil || strings.Join(got.RuntimeFlags, " ") != strings.Join(want.RuntimeFlags, " ") ||
		got.DraftModel != want.DraftModel || got.NumTokens != 16 || got.AcceptanceRate != 0.8 {
		t.Errorf("dmr opts %+v", got)
	}
	for _, c := range []struct{ src, want string }{
		{"models:\n  m: {provider: openai, model: x, provider_opts: {speculative_num_tokens: 4}}\nagents:\n  root: {model: m}\n", `provider_opts speculative_num_tokens applies to provider dmr, not "openai"`},
		{"models:\n  m: {provider: dmr, model: x, provider_opts: {speculative_acceptance_rate: 2}}\nagents:\n  root: {model: m}\n", "speculative_acceptance_rate is between 0 and 1"},
	} {
		if _, err := parse("a.yaml", []byte(c.src), noEnv); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err %v, want %q", err, c.want)
		}
	}
}
