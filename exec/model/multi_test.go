package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/internal/fakellm"
)

func scriptModel(name string, texts ...string) *config.Model {
	m := &config.Model{Name: name, Provider: "script", API: "script"}
	for _, t := range texts {
		m.Script = append(m.Script, config.ScriptEntry{Text: t})
	}
	return m
}

type stateful interface {
	State() json.RawMessage
	Restore(json.RawMessage) error
}

// An alloy's models take turns, in order; its state (whose turn, and each
// script's position) survives a resume.
func TestAlloyTakesTurns(t *testing.T) {
	cfg := &config.Model{Name: "a,b", Provider: "alloy", API: "alloy", Alloy: []*config.Model{scriptModel("a", "a1", "a2"), scriptModel("b", "b1", "b2")}}
	m, err := model.New(cfg, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		tr, err := m.Turn(context.Background(), request())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tr.Message.Text)
	}
	if strings.Join(got, " ") != "a1 b1 a2" {
		t.Errorf("turns %v", got)
	}
	// Resumed: the next turn is b's, at its second entry.
	state := m.(stateful).State()
	again, err := model.New(cfg, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.(stateful).Restore(state); err != nil {
		t.Fatal(err)
	}
	if tr, err := again.Turn(context.Background(), request()); err != nil || tr.Message.Text != "b2" {
		t.Errorf("after restore: %+v %v (state %s)", tr, err, state)
	}
}

// A fallback takes over when the model fails: an error not worth retrying
// (400, 429) moves on at once and pins the fallback for the cooldown; a
// 5xx is retried on the same model first; when all fail, the last error
// says so.
func TestFallback(t *testing.T) {
	o := fastOpts(env(map[string]string{"OPENAI_API_KEY": "k"}))
	o.MaxRetries = -1 // the SDK's own retries off: count the fallback's
	t.Run("4xx moves on and pins", func(t *testing.T) {
		primary := fakellm.New(fakellm.OpenAI, fakellm.Reply{Status: 400, Body: `{"error":{"message":"bad model"}}`}, fakellm.Reply{Text: []string{"primary"}})
		defer primary.Close()
		cfg := &config.Model{Name: "p", Provider: "openai", API: "openai", Model: "x", BaseURL: primary.URL,
			Fallback: &config.Fallback{Models: []*config.Model{scriptModel("s", "from fallback", "again fallback")}, Retries: 2, Cooldown: time.Hour}}
		m, err := model.New(cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"from fallback", "again fallback"} {
			tr, err := m.Turn(context.Background(), request())
			if err != nil || tr.Message.Text != want {
				t.Fatalf("turn %+v err %v, want %q", tr, err, want)
			}
		}
		if n := len(primary.Requests()); n != 1 {
			t.Errorf("primary asked %d times; the cooldown should keep turns on the fallback", n)
		}
	})
	t.Run("5xx retried then falls back", func(t *testing.T) {
		var replies []fakellm.Reply
		for range 5 {
			replies = append(replies, fakellm.Reply{Status: 503, Body: `{"error":{"message":"busy"}}`})
		}
		primary := fakellm.New(fakellm.OpenAI, replies...)
		defer primary.Close()
		cfg := &config.Model{Name: "p", Provider: "openai", API: "openai", Model: "x", BaseURL: primary.URL,
			Fallback: &config.Fallback{Models: []*config.Model{scriptModel("s", "saved")}, Retries: 2, Cooldown: time.Hour}}
		m, err := model.New(cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := m.Turn(context.Background(), request())
		if err != nil || tr.Message.Text != "saved" {
			t.Fatalf("turn %+v err %v", tr, err)
		}
		if n := len(primary.Requests()); n != 3 {
			t.Errorf("primary asked %d times, want 1 + 2 retries", n)
		}
	})
	t.Run("all fail", func(t *testing.T) {
		a := fakellm.New(fakellm.OpenAI, fakellm.Reply{Status: 401, Body: `{"error":{"message":"no key"}}`})
		defer a.Close()
		b := fakellm.New(fakellm.OpenAI, fakellm.Reply{Status: 404, Body: `{"error":{"message":"no such model"}}`})
		defer b.Close()
		cfg := &config.Model{Name: "p", Provider: "openai", API: "openai", Model: "x", BaseURL: a.URL,
			Fallback: &config.Fallback{Models: []*config.Model{{Name: "q", Provider: "openai", API: "openai", Model: "y", BaseURL: b.URL}}, Cooldown: time.Hour}}
		m, err := model.New(cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Turn(context.Background(), request())
		var ae *model.APIError
		if !errors.As(err, &ae) || ae.Status != 404 || !strings.Contains(err.Error(), "p and its fallbacks failed") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("a fallback's missing key fails before any request", func(t *testing.T) {
		cfg := &config.Model{Name: "p", Provider: "openai", API: "openai", Model: "x",
			Fallback: &config.Fallback{Models: []*config.Model{{Name: "c", Provider: "anthropic", API: "anthropic", Model: "y"}}}}
		_, err := model.New(cfg, o)
		var mk *model.MissingKeyError
		if !errors.As(err, &mk) || mk.Var != "ANTHROPIC_API_KEY" {
			t.Fatalf("err %v", err)
		}
	})
}
