package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/internal/fakellm"
)

var formats = []struct {
	provider string
	format   fakellm.Format
	keyVar   string
	baseVar  string
}{
	{"openai", fakellm.OpenAI, "OPENAI_API_KEY", "OPENAI_BASE_URL"},
	{"anthropic", fakellm.Anthropic, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"},
	{"google", fakellm.Gemini, "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"},
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// fastOpts are Options with retries short enough for tests.
func fastOpts(getenv func(string) string) model.Options {
	return model.Options{Getenv: getenv, TurnRetryDelay: time.Millisecond, MaxRetryDelay: time.Second}
}

func newModel(t *testing.T, provider, baseURL string, o model.Options) exec.Model {
	t.Helper()
	m, err := model.New(&config.Model{Name: "m", Provider: provider, Model: "test-model", BaseURL: baseURL}, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var shellTool = exec.ToolSpec{
	Name:        "shell",
	Description: "Run a command",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}`),
}

func request() exec.Request {
	return exec.Request{
		System:   "You are a test.",
		Messages: []exec.Message{{Role: exec.RoleUser, Text: "hello"}},
		Tools:    []exec.ToolSpec{shellTool},
	}
}

func TestTurns(t *testing.T) {
	cases := []struct {
		name  string
		reply fakellm.Reply
		want  exec.Turn
	}{
		{
			name:  "text",
			reply: fakellm.Reply{Text: []string{"Hel", "lo, ", "world"}, InTokens: 12, OutTokens: 3},
			want:  exec.Turn{Message: exec.Message{Role: exec.RoleAssistant, Text: "Hello, world"}, Usage: exec.Usage{InputTokens: 12, OutputTokens: 3}},
		},
		{
			name:  "one tool call",
			reply: fakellm.Reply{Calls: []fakellm.Call{{ID: "c1", Name: "shell", Args: []string{`{"cmd":"ls"}`}}}, InTokens: 5, OutTokens: 7},
			want: exec.Turn{Message: exec.Message{Role: exec.RoleAssistant, ToolCalls: []exec.ToolCall{
				{ID: "c1", Name: "shell", Arguments: json.RawMessage(`{"cmd":"ls"}`)},
			}}, Usage: exec.Usage{InputTokens: 5, OutputTokens: 7}},
		},
		{
			name: "several calls, arguments split over chunks, with text",
			reply: fakellm.Reply{
				Text: []string{"Let me ", "check."},
				Calls: []fakellm.Call{
					{ID: "c1", Name: "shell", Args: []string{`{"cm`, `d":"git `, `status"}`}},
					{ID: "c2", Name: "user_prompt", Args: []string{`{"message":`, `"Deploy?"}`}},
					{ID: "c3", Name: "verdict", Args: nil},
				},
				InTokens: 100, OutTokens: 40,
			},
			want: exec.Turn{Message: exec.Message{Role: exec.RoleAssistant, Text: "Let me check.", ToolCalls: []exec.ToolCall{
				{ID: "c1", Name: "shell", Arguments: json.RawMessage(`{"cmd":"git status"}`)},
				{ID: "c2", Name: "user_prompt", Arguments: json.RawMessage(`{"message":"Deploy?"}`)},
				{ID: "c3", Name: "verdict", Arguments: json.RawMessage(`{}`)},
			}}, Usage: exec.Usage{InputTokens: 100, OutputTokens: 40}},
		},
	}
	for _, f := range formats {
		for _, c := range cases {
			t.Run(f.provider+"/"+c.name, func(t *testing.T) {
				srv := fakellm.New(f.format, c.reply)
				defer srv.Close()
				var deltas atomic.Int32
				o := fastOpts(env(map[string]string{f.keyVar: "k"}))
				o.OnDelta = func() { deltas.Add(1) }
				got, err := newModel(t, f.provider, srv.URL, o).Turn(context.Background(), request())
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Errorf("turn:\n got %+v\nwant %+v", got, c.want)
				}
				if deltas.Load() == 0 {
					t.Error("OnDelta never called")
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
			})
		}
	}
}

func TestRetries(t *testing.T) {
	ok := fakellm.Reply{Text: []string{"ok"}}
	fast := map[string]string{"retry-after-ms": "1"}
	cases := []struct {
		name     string
		replies  []fakellm.Reply
		requests int
		wantErr  string // "" = the turn succeeds with "ok"
	}{
		{"429 twice then success", []fakellm.Reply{{Status: 429, Header: fast}, {Status: 429, Header: fast}, ok}, 3, ""},
		{"500 every time", []fakellm.Reply{{Status: 500, Message: "boom", Header: fast, Repeat: true}}, 4, "500 Internal Server Error: boom (after 3 retries)"},
		{"503 then success", []fakellm.Reply{{Status: 503, Header: fast}, ok}, 2, ""},
		{"401 is not retried", []fakellm.Reply{{Status: 401, Message: "Incorrect API key provided"}}, 1, "401 Unauthorized: Incorrect API key provided"},
		{"403 is not retried", []fakellm.Reply{{Status: 403, Message: "model not allowed"}}, 1, "403 Forbidden: model not allowed"},
		{"Retry-After too long gives up at once", []fakellm.Reply{{Status: 429, Message: "slow down", Header: map[string]string{"retry-after": "3600"}}, ok}, 1, "429 Too Many Requests: slow down"},
		{"stream cut mid-way retries the whole turn", []fakellm.Reply{{Text: []string{"par", "tial"}, CutAfter: 2}, ok}, 2, ""},
		{"stream cut every time", []fakellm.Reply{{Text: []string{"par", "tial"}, CutAfter: 2, Repeat: true}}, 4, "stream cut"},
		{"stream ends early", []fakellm.Reply{{Raw: "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"}, ok}, 2, ""},
		{"malformed stream", []fakellm.Reply{{Raw: "event: message_start\ndata: {not json\n\ndata: {not json\n\n", Repeat: true}}, 1, "malformed stream"},
	}
	for _, f := range formats {
		for _, c := range cases {
			t.Run(f.provider+"/"+c.name, func(t *testing.T) {
				srv := fakellm.New(f.format, c.replies...)
				defer srv.Close()
				start := time.Now()
				got, err := newModel(t, f.provider, srv.URL, fastOpts(env(map[string]string{f.keyVar: "k"}))).Turn(context.Background(), request())
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("took %v", d)
				}
				if c.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					if got.Message.Text != "ok" {
						t.Errorf("text %q, want ok", got.Message.Text)
					}
				} else {
					if err == nil {
						t.Fatalf("no error, want %q", c.wantErr)
					}
					t.Logf("error: %v", err)
					if !strings.Contains(err.Error(), c.wantErr) || !strings.HasPrefix(err.Error(), f.provider+": ") {
						t.Errorf("error %q, want %q", err, c.wantErr)
					}
				}
				if n := len(srv.Requests()); n != c.requests {
					t.Errorf("%d requests, want %d", n, c.requests)
				}
			})
		}
	}
}

func TestAPIErrorType(t *testing.T) {
	for _, f := range formats {
		srv := fakellm.New(f.format, fakellm.Reply{Status: 401, Message: "bad key"})
		_, err := newModel(t, f.provider, srv.URL, fastOpts(env(map[string]string{f.keyVar: "k"}))).Turn(context.Background(), request())
		srv.Close()
		var ae *model.APIError
		if !errors.As(err, &ae) || ae.Status != 401 || ae.Message != "bad key" {
			t.Errorf("%s: %#v", f.provider, err)
		}
	}
}

func TestKeys(t *testing.T) {
	for _, f := range formats {
		t.Run(f.provider, func(t *testing.T) {
			// Missing key: a typed error naming the variable, before any request.
			srv := fakellm.New(f.format, fakellm.Reply{Text: []string{"ok"}, Repeat: true})
			defer srv.Close()
			_, err := model.New(&config.Model{Name: "m", Provider: f.provider, Model: "x", BaseURL: srv.URL, TokenKey: "MY_KEY"}, fastOpts(env(map[string]string{f.keyVar: "ambient"})))
			var mk *model.MissingKeyError
			if !errors.As(err, &mk) || mk.Var != "MY_KEY" || !strings.Contains(err.Error(), "MY_KEY") {
				t.Fatalf("err = %v, want MissingKeyError for MY_KEY", err)
			}
			_, err = model.New(&config.Model{Name: "m", Provider: f.provider, Model: "x"}, fastOpts(env(nil)))
			if !errors.As(err, &mk) || mk.Var != f.keyVar {
				t.Fatalf("err = %v, want MissingKeyError for %s", err, f.keyVar)
			}
			if len(srv.Requests()) != 0 {
				t.Fatal("a request was sent")
			}

			// token_key names another variable: only its value is sent, never
			// the ambient default key, to the custom base_url.
			t.Setenv(f.keyVar, "sk-ambient-secret")
			t.Setenv("OPENAI_ORG_ID", "org-ambient")
			t.Setenv("ANTHROPIC_AUTH_TOKEN", "ambient-token")
			m, err := model.New(&config.Model{Name: "m", Provider: f.provider, Model: "x", BaseURL: srv.URL, TokenKey: "MY_KEY"},
				fastOpts(env(map[string]string{f.keyVar: "sk-ambient-secret", "MY_KEY": "sk-mine"})))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Turn(context.Background(), request()); err != nil {
				t.Fatal(err)
			}
			req := srv.Requests()[0]
			for name, vals := range req.Header {
				for _, v := range vals {
					if strings.Contains(v, "ambient") {
						t.Errorf("header %s: %q carries an ambient credential", name, v)
					}
				}
			}
			var got string
			keyHeader := map[string]string{"anthropic": "X-Api-Key", "google": "X-Goog-Api-Key"}[f.provider]
			if f.provider == "openai" {
				got = req.Header.Get("Authorization")
				if got != "Bearer sk-mine" {
					t.Errorf("Authorization %q", got)
				}
			} else {
				got = req.Header.Get(keyHeader)
				if got != "sk-mine" || req.Header.Get("Authorization") != "" {
					t.Errorf("%s %q, authorization %q", keyHeader, got, req.Header.Get("Authorization"))
				}
			}
		})
	}
}

func TestBaseURL(t *testing.T) {
	for _, f := range formats {
		t.Run(f.provider, func(t *testing.T) {
			srv := fakellm.New(f.format, fakellm.Reply{Text: []string{"ok"}, Repeat: true})
			defer srv.Close()
			// No base_url: the provider's variable (read through Getenv only).
			t.Setenv(f.baseVar, "http://127.0.0.1:1/never")
			o := fastOpts(env(map[string]string{f.keyVar: "k", f.baseVar: srv.URL}))
			if _, err := newModel(t, f.provider, "", o).Turn(context.Background(), request()); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"openai": "/chat/completions", "anthropic": "/v1/messages", "google": "/v1beta/models/test-model:streamGenerateContent"}[f.provider]
			if p := srv.Requests()[0].Path; p != want {
				t.Errorf("path %q, want %q", p, want)
			}
		})
	}
}

func TestOllama(t *testing.T) {
	srv := fakellm.New(fakellm.OpenAI, fakellm.Reply{Text: []string{"ok"}, Repeat: true})
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-ambient")
	// No token_key: no key needed and none sent.
	m := newModel(t, "ollama", srv.URL+"/v1", fastOpts(env(map[string]string{"OPENAI_API_KEY": "sk-ambient"})))
	if _, err := m.Turn(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if a := r.Header.Get("Authorization"); a != "" {
		t.Errorf("ollama sent Authorization %q", a)
	}
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path %q", r.Path)
	}
	// token_key set: required and sent.
	_, err := model.New(&config.Model{Name: "m", Provider: "ollama", Model: "x", TokenKey: "OLLAMA_KEY"}, fastOpts(env(nil)))
	var missing *model.MissingKeyError
	if !errors.As(err, &missing) || missing.Var != "OLLAMA_KEY" {
		t.Errorf("err = %v, want a missing OLLAMA_KEY", err)
	}
	m, err = model.New(&config.Model{Name: "m", Provider: "ollama", Model: "x", BaseURL: srv.URL, TokenKey: "OLLAMA_KEY"}, fastOpts(env(map[string]string{"OLLAMA_KEY": "ok-key"})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Turn(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	if a := srv.Requests()[1].Header.Get("Authorization"); a != "Bearer ok-key" {
		t.Errorf("Authorization %q", a)
	}
}

func TestUnknownProvider(t *testing.T) {
	_, err := model.New(&config.Model{Name: "m", Provider: "vertex"}, model.Options{})
	if err == nil || !strings.Contains(err.Error(), "vertex") {
		t.Fatal(err)
	}
}

func TestCancel(t *testing.T) {
	for _, f := range formats {
		srv := fakellm.New(f.format, fakellm.Reply{Status: 500, Header: map[string]string{"retry-after": "30"}, Repeat: true})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := newModel(t, f.provider, srv.URL, model.Options{Getenv: env(map[string]string{f.keyVar: "k"})}).Turn(ctx, request())
		cancel()
		srv.Close()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err = %v", f.provider, err)
		}
	}
}

// An overloaded_error event in an Anthropic stream retries the turn; an
// invalid_request_error event is returned.
func TestAnthropicErrorEvent(t *testing.T) {
	ev := func(typ string) string {
		return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"" + typ + "\",\"message\":\"went wrong\"}}\n\n"
	}
	srv := fakellm.New(fakellm.Anthropic, fakellm.Reply{Raw: ev("overloaded_error")}, fakellm.Reply{Text: []string{"ok"}}, fakellm.Reply{Raw: ev("invalid_request_error")})
	defer srv.Close()
	m := newModel(t, "anthropic", srv.URL, fastOpts(env(map[string]string{"ANTHROPIC_API_KEY": "k"})))
	got, err := m.Turn(context.Background(), request())
	if err != nil || got.Message.Text != "ok" {
		t.Fatalf("turn %+v, err %v", got, err)
	}
	_, err = m.Turn(context.Background(), request())
	if err == nil || err.Error() != "anthropic: error event: went wrong" {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests", n)
	}
}

// An OpenAI stream carrying an error object is an error, not a hang or a
// retry.
func TestOpenAIErrorInStream(t *testing.T) {
	srv := fakellm.New(fakellm.OpenAI, fakellm.Reply{Raw: "data: {\"error\":{\"message\":\"context too long\",\"type\":\"invalid_request_error\"}}\n\n", Repeat: true})
	defer srv.Close()
	_, err := newModel(t, "openai", srv.URL, fastOpts(env(map[string]string{"OPENAI_API_KEY": "k"}))).Turn(context.Background(), request())
	if err == nil || !strings.Contains(err.Error(), "context too long") {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}
