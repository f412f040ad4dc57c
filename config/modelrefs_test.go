package config

import (
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// model: auto is the first provider whose key is set, in cagent's order,
// else dmr.
func TestModelAuto(t *testing.T) {
	src := []byte("agents:\n  root: {model: auto}\n")
	cases := []struct {
		env            map[string]string
		provider, want string
		err            string
	}{
		{env: map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, provider: "anthropic", want: "claude-sonnet-4-5"},
		{env: map[string]string{"OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k"}, provider: "openai", want: "gpt-5-mini"},
		{env: map[string]string{"GEMINI_API_KEY": "k"}, provider: "google", want: "gemini-2.5-flash"},
		{env: map[string]string{"MISTRAL_API_KEY": "k"}, provider: "mistral", want: "mistral-small-latest"},
		{env: map[string]string{}, provider: "dmr", want: "ai/qwen3:latest"},
		{env: map[string]string{"AWS_PROFILE": "p"}, err: "a.yaml:2:17: model: auto picks amazon-bedrock (AWS_PROFILE is set), which is not supported by hitl"},
		{env: map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "1"}, err: "Vertex AI"},
	}
	for _, c := range cases {
		cfg, err := parse("a.yaml", src, envOf(c.env))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("env %v: err %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if m := cfg.Agents[0].Model; m.Provider != c.provider || m.Model != c.want || m.MaxTokens == nil {
			t.Errorf("env %v: %+v", c.env, m)
		}
	}
}

// Alloys: comma-joined references, or a model without provider whose
// model joins references; nested alloys are flattened.
func TestAlloyModels(t *testing.T) {
	src := `models:
  a: {provider: openai, model: gpt-4o}
  b: {provider: anthropic, model: claude}
  ab: {model: "a,b"}
agents:
  root: {model: "ab,google/gemini-2.5-flash"}
  two: {model: ab}
`
	cfg, err := parse("a.yaml", []byte(src), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range cfg.Agents[0].Model.Alloy {
		names = append(names, m.Name)
	}
	if strings.Join(names, " ") != "a b google/gemini-2.5-flash" || cfg.Agents[0].Model.API != "alloy" {
		t.Errorf("root alloy %v", names)
	}
	if len(cfg.Agents[1].Model.Alloy) != 2 {
		t.Errorf("two: %+v", cfg.Agents[1].Model)
	}
	_, err = parse("a.yaml", []byte("agents:\n  root: {model: \"openai/x,nope\"}\n"), noEnv)
	if err == nil || !strings.Contains(err.Error(), `unknown model "nope"`) {
		t.Errorf("err %v", err)
	}
}

// fallback: models resolved like an agent's model, cagent's defaults for
// retries (2; -1 none) and cooldown (1m).
func TestFallbackConfig(t *testing.T) {
	src := `models:
  a: {provider: openai, model: gpt-4o}
agents:
  root:
    model: a
    fallback: {models: [anthropic/claude, a], retries: -1, cooldown: 30s}
  other:
    model: a
    fallback: {models: [ollama/q]}
  plain: {model: a}
`
	cfg, err := parse("a.yaml", []byte(src), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	f := cfg.Agents[0].Model.Fallback
	if f == nil || len(f.Models) != 2 || f.Models[0].Provider != "anthropic" || f.Retries != 0 || f.Cooldown != 30*time.Second {
		t.Fatalf("root fallback %+v", f)
	}
	if f := cfg.Agents[1].Model.Fallback; f.Retries != 2 || f.Cooldown != time.Minute {
		t.Errorf("defaults %+v", f)
	}
	if cfg.Agents[2].Model.Fallback != nil || cfg.Models[0].Fallback != nil {
		t.Error("the fallback leaked onto the shared model")
	}
	_, err = parse("a.yaml", []byte("agents:\n  root:\n    model: openai/x\n    fallback: {models: [], retries: 1}\n"), noEnv)
	if err == nil || !strings.Contains(err.Error(), "a.yaml:4:15: fallback has no models") {
		t.Errorf("err %v", err)
	}
}

// routing: rules resolved like model references, in any order of models:;
// a cycle or a rule without examples is an error where it is written.
func TestRoutingConfig(t *testing.T) {
	src := `models:
  router:
    provider: openai
    model: gpt-4o-mini
    routing:
      - {model: coder, examples: [fix the bug]}
      - {model: anthropic/claude, examples: [write a poem]}
  coder: {provider: openai, model: gpt-4o}
agents:
  root: {model: router}
`
	cfg, err := parse("a.yaml", []byte(src), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Agents[0].Model.Routing
	if len(r) != 2 || r[0].Model.Name != "coder" || r[1].Model.Provider != "anthropic" || r[1].Examples[0] != "write a poem" {
		t.Fatalf("routes %+v", r)
	}
	for _, c := range []struct{ src, want string }{
		{"models:\n  a: {provider: openai, model: x, routing: [{model: b, examples: [x]}]}\n  b: {provider: openai, model: y, routing: [{model: a, examples: [y]}]}\nagents:\n  root: {model: a}\n",
			"a.yaml:3:53: routing rule model a routes back to a (a cycle)"},
		{"models:\n  a: {provider: openai, model: x, routing: [{model: openai/y}]}\nagents:\n  root: {model: a}\n", "a.yaml:2:45: routing rule for openai/y has no examples"},
		{"models:\n  a: {provider: openai, model: x, routing: [{examples: [y]}]}\nagents:\n  root: {model: a}\n", "a routing rule needs model:"},
	} {
		if _, err := parse("a.yaml", []byte(c.src), noEnv); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err %v\nwant %q", err, c.want)
		}
	}
}
