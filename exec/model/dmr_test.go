package model_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/internal/fakellm"
)

// dmr's provider_opts reach Model Runner's _configure endpoint, with the
// context size, once, before the first turn; a refusal stops the run.
func TestDMRConfigure(t *testing.T) {
	srv := fakellm.New(fakellm.OpenAI, fakellm.Reply{Status: 202, Body: "{}"}, fakellm.Reply{Text: []string{"one"}}, fakellm.Reply{Text: []string{"two"}})
	defer srv.Close()
	cfg := &config.Model{Name: "q", Provider: "dmr", API: "openai", Model: "ai/qwen3", BaseURL: srv.URL + "/engines/v1", MaxTokens: ptr(int64(8192)),
		ProviderOpts: config.ProviderOpts{DMR: &config.DMROpts{RuntimeFlags: []string{"-ub", "1024"}, DraftModel: "ai/qwen3:0.6B", NumTokens: 16, AcceptanceRate: 0.8}}}
	m, err := model.New(cfg, fastOpts(env(nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one", "two"} {
		tr, err := m.Turn(context.Background(), request())
		if err != nil || tr.Message.Text != want {
			t.Fatalf("turn %+v %v", tr, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Path != "/engines/_configure" || reqs[1].Path != "/engines/v1/chat/completions" {
		t.Fatalf("requests %+v", reqs)
	}
	var body any
	_ = json.Unmarshal([]byte(reqs[0].Body), &body)
	want := jsonOf(t, `{"model":"ai/qwen3","context-size":8192,"runtime-flags":["-ub","1024"],"speculative":{"draft_model":"ai/qwen3:0.6B","num_tokens":16,"min_acceptance_rate":0.8}}`)
	if !reflect.DeepEqual(body, want) {
		t.Errorf("configure body %s", reqs[0].Body)
	}

	refuse := fakellm.New(fakellm.OpenAI, fakellm.Reply{Status: 404, Message: "no such endpoint"})
	defer refuse.Close()
	cfg.BaseURL = refuse.URL + "/engines/v1"
	m, err = model.New(cfg, fastOpts(env(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Turn(context.Background(), request()); err == nil || !strings.Contains(err.Error(), "configuring the model (provider_opts)") || len(refuse.Requests()) != 1 {
		t.Fatalf("err %v after %d requests", err, len(refuse.Requests()))
	}
}
