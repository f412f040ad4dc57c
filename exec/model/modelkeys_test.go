package model_test

import (
	"context"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/internal/fakellm"
)

// frequency_penalty and presence_penalty reach the Chat Completions body.
func TestOpenAIPenalties(t *testing.T) {
	b := body(t, "openai", &config.Model{Model: "gpt-4o-mini", FrequencyPenalty: ptr(0.5), PresencePenalty: ptr(-1.0)}, conversation())
	if b["frequency_penalty"] != 0.5 || b["presence_penalty"] != -1.0 {
		t.Errorf("frequency_penalty %v presence_penalty %v", b["frequency_penalty"], b["presence_penalty"])
	}
	b = body(t, "openai", &config.Model{Model: "gpt-4o-mini"}, conversation())
	if _, ok := b["frequency_penalty"]; ok {
		t.Error("frequency_penalty sent though unset")
	}
}

// provider_opts interleaved_thinking asks Anthropic for its beta; without
// it the header is absent.
func TestAnthropicInterleavedThinking(t *testing.T) {
	for _, on := range []bool{true, false} {
		srv := fakellm.New(fakellm.Anthropic, fakellm.Reply{Text: []string{"ok"}})
		defer srv.Close()
		m := &config.Model{Name: "m", Provider: "anthropic", Model: "claude-x", BaseURL: srv.URL, ProviderOpts: config.ProviderOpts{InterleavedThinking: on}}
		mod, err := model.New(m, fastOpts(env(map[string]string{"ANTHROPIC_API_KEY": "k"})))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mod.Turn(context.Background(), request()); err != nil {
			t.Fatal(err)
		}
		got := srv.Requests()[0].Header.Get("anthropic-beta")
		if want := map[bool]string{true: "interleaved-thinking-2025-05-14"}[on]; got != want {
			t.Errorf("interleaved_thinking %v: anthropic-beta %q, want %q", on, got, want)
		}
	}
}
