package cmd

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/config"
)

func TestModelFor(t *testing.T) {
	base := &config.Model{Name: "fast", Provider: "openai", Model: "gpt-4o-mini", BaseURL: "http://gw/v1", TokenKey: "GW"}
	other := &config.Model{Name: "smart", Provider: "anthropic", Model: "claude"}
	root := &config.Agent{Name: "root", Model: base}
	second := &config.Agent{Name: "second", Model: other}
	cfg := &config.Config{Models: []*config.Model{base, other}, Agents: []*config.Agent{root, second}}
	cases := []struct {
		agent     *config.Agent
		overrides []string
		want      string // provider/model base_url token_key
		err       string
	}{
		{root, nil, "openai/gpt-4o-mini http://gw/v1 GW", ""},
		{root, []string{"openai/gpt-4.1"}, "openai/gpt-4.1 http://gw/v1 GW", ""},
		{root, []string{"root=ollama/qwen3"}, "ollama/qwen3  ", ""},
		{root, []string{"second=openai/x"}, "openai/gpt-4o-mini http://gw/v1 GW", ""},
		{second, []string{"root=openai/x", "second=smart"}, "anthropic/claude  ", ""},
		{root, []string{"smart"}, "anthropic/claude  ", ""},
		{root, []string{"openai/a", "openai/b"}, "openai/b http://gw/v1 GW", ""},
		{root, []string{"nobody=openai/x"}, "", `no agent "nobody"`},
		{root, []string{"gpt-4"}, "", "want PROVIDER/MODEL"},
		{root, []string{"google/gemini-2.5-flash"}, "google/gemini-2.5-flash  ", ""},
		{root, []string{"amazon-bedrock/claude"}, "", `provider "amazon-bedrock" is not supported by hitl`},
		{root, []string{"bogus/x"}, "", `unknown provider "bogus"`},
		{root, []string{"script/x"}, "", "script model needs its script"},
	}
	for _, c := range cases {
		m, err := modelFor(cfg, c.agent, c.overrides)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v, want %q", c.overrides, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.overrides, err)
			continue
		}
		if got := m.Provider + "/" + m.Model + " " + m.BaseURL + " " + m.TokenKey; got != c.want {
			t.Errorf("%v: %q, want %q", c.overrides, got, c.want)
		}
	}
	if base.Model != "gpt-4o-mini" {
		t.Error("an override changed the agent file's model")
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func TestSpinner(t *testing.T) {
	var w syncBuf
	s := &spinner{w: &w}
	s.Start()
	time.Sleep(150 * time.Millisecond)
	s.Delta()
	time.Sleep(150 * time.Millisecond)
	s.Stop()
	s.Stop()
	out := w.b.String()
	if !strings.Contains(out, "waiting for the model") || !strings.Contains(out, "the model is writing") || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("spinner drew %q", out)
	}
}

// An override keeps the model's settings but takes the API its model
// needs: a codex model speaks the Responses API.
func TestModelOverrideAPI(t *testing.T) {
	base := &config.Model{Name: "fast", Provider: "openai", API: "openai", Model: "gpt-4o-mini", BaseURL: "http://gw/v1", TokenKey: "GW"}
	root := &config.Agent{Name: "root", Model: base}
	cfg := &config.Config{Models: []*config.Model{base}, Agents: []*config.Agent{root}}
	m, err := modelFor(cfg, root, []string{"openai/gpt-5-codex"})
	if err != nil || m.API != config.APIResponses || m.BaseURL != "http://gw/v1" {
		t.Fatalf("%+v %v", m, err)
	}
}
