package model_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/internal/fakellm"
)

// An OpenAI-compatible preset provider runs through the openai client with
// its own key variable (never OPENAI_API_KEY) and base URL (never
// OPENAI_BASE_URL); dmr sends no key at all.
func TestPresetProviders(t *testing.T) {
	srv := fakellm.New(fakellm.OpenAI, fakellm.Reply{Text: []string{"ok"}, Repeat: true})
	defer srv.Close()
	ambient := map[string]string{"OPENAI_API_KEY": "sk-ambient", "OPENAI_BASE_URL": "http://127.0.0.1:1/never"}
	for k, v := range ambient {
		t.Setenv(k, v)
	}

	m := &config.Model{Name: "m", Provider: "mistral", Model: "mistral-large-latest"}
	config.ApplyPreset(m)
	if m.BaseURL != "https://api.mistral.ai/v1" || m.TokenKey != "MISTRAL_API_KEY" {
		t.Fatalf("preset: %+v", m)
	}
	_, err := model.New(m, fastOpts(env(ambient)))
	var missing *model.MissingKeyError
	if !errors.As(err, &missing) || missing.Var != "MISTRAL_API_KEY" {
		t.Fatalf("err = %v, want a missing MISTRAL_API_KEY", err)
	}

	m.BaseURL = srv.URL
	vars := map[string]string{"MISTRAL_API_KEY": "mk"}
	for k, v := range ambient {
		vars[k] = v
	}
	mod, err := model.New(m, fastOpts(env(vars)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mod.Turn(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	if a := srv.Requests()[0].Header.Get("Authorization"); a != "Bearer mk" {
		t.Errorf("Authorization %q, want the MISTRAL_API_KEY value", a)
	}

	d := &config.Model{Name: "d", Provider: "dmr", Model: "ai/qwen3", BaseURL: srv.URL}
	config.ApplyPreset(d)
	mod, err = model.New(d, fastOpts(env(ambient)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mod.Turn(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	if a := srv.Requests()[1].Header.Get("Authorization"); a != "" {
		t.Errorf("dmr sent Authorization %q", a)
	}

	// A provider that is no preset is still refused.
	if _, err := model.New(&config.Model{Name: "g", Provider: "google", Model: "x", API: "google"}, fastOpts(env(nil))); err == nil {
		t.Error("google accepted")
	}
}
