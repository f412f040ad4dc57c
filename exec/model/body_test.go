package model_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/internal/fakellm"
)

func ptr[T any](v T) *T { return &v }

// conversation has every kind of message: user, assistant text + two calls
// (with thinking), both results (one an error), and a follow-up.
func conversation() exec.Request {
	return exec.Request{
		System: "sys",
		Tools:  []exec.ToolSpec{shellTool},
		Messages: []exec.Message{
			{Role: exec.RoleUser, Text: "deploy"},
			{Role: exec.RoleAssistant, Text: "Checking.", Thinking: []exec.Thinking{{Text: "hmm", Signature: "sig1"}, {Redacted: "opaque"}},
				ToolCalls: []exec.ToolCall{
					{ID: "c1", Name: "shell", Arguments: json.RawMessage(`{"cmd":"ls"}`)},
					{ID: "c2", Name: "shell", Arguments: json.RawMessage(`{"cmd":"pwd"}`)},
				}},
			{Role: exec.RoleTool, ToolCallID: "c1", ToolName: "shell", Text: "a b"},
			{Role: exec.RoleTool, ToolCallID: "c2", ToolName: "shell", Text: "denied", IsError: true},
			{Role: exec.RoleAssistant, Text: "Done?"},
			{Role: exec.RoleUser, Text: "yes"},
		},
	}
}

func body(t *testing.T, provider string, m *config.Model, req exec.Request) map[string]any {
	t.Helper()
	f := fakellm.OpenAI
	if provider == "anthropic" {
		f = fakellm.Anthropic
	}
	srv := fakellm.New(f, fakellm.Reply{Text: []string{"ok"}})
	defer srv.Close()
	m.Name, m.Provider, m.BaseURL = "m", provider, srv.URL
	mod, err := model.New(m, fastOpts(env(map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mod.Turn(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal([]byte(srv.Requests()[0].Body), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenAIBody(t *testing.T) {
	b := body(t, "openai", &config.Model{Model: "gpt-4o-mini", MaxTokens: ptr[int64](100), Temperature: ptr(0.2), TopP: ptr(0.9)}, conversation())
	want := jsonOf(t, `{
		"model": "gpt-4o-mini", "stream": true, "stream_options": {"include_usage": true},
		"max_tokens": 100, "temperature": 0.2, "top_p": 0.9,
		"messages": [
			{"role": "system", "content": "sys"},
			{"role": "user", "content": "deploy"},
			{"role": "assistant", "content": "Checking.", "tool_calls": [
				{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"ls\"}"}},
				{"id": "c2", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"pwd\"}"}}]},
			{"role": "tool", "tool_call_id": "c1", "content": "a b"},
			{"role": "tool", "tool_call_id": "c2", "content": "denied"},
			{"role": "assistant", "content": "Done?"},
			{"role": "user", "content": "yes"}
		],
		"tools": [{"type": "function", "function": {"name": "shell", "description": "Run a command",
			"parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}}]
	}`)
	if !reflect.DeepEqual(b, want) {
		got, _ := json.MarshalIndent(b, "", " ")
		t.Errorf("body:\n%s", got)
	}
}

func TestOpenAIReasoningModels(t *testing.T) {
	cases := []struct {
		model  string
		budget *config.ThinkingBudget
		want   map[string]any // fields that must be present
		absent []string
	}{
		{"gpt-4o", nil, map[string]any{"max_tokens": 50.0, "temperature": 0.5}, []string{"max_completion_tokens", "reasoning_effort"}},
		{"o3-mini", &config.ThinkingBudget{Effort: "high"}, map[string]any{"max_completion_tokens": 50.0, "reasoning_effort": "high"}, []string{"max_tokens", "temperature", "top_p"}},
		{"o1", nil, map[string]any{"max_completion_tokens": 50.0}, []string{"max_tokens", "temperature"}},
		{"o4-mini", &config.ThinkingBudget{Tokens: 1000}, map[string]any{"reasoning_effort": "low"}, []string{"temperature"}},
		{"gpt-5-mini", &config.ThinkingBudget{Effort: "minimal"}, map[string]any{"max_completion_tokens": 50.0, "reasoning_effort": "minimal"}, []string{"temperature", "max_tokens"}},
		{"gpt-5", &config.ThinkingBudget{Tokens: 20000}, map[string]any{"reasoning_effort": "high"}, []string{"temperature"}},
		{"gpt-5-chat-latest", nil, map[string]any{"max_tokens": 50.0, "temperature": 0.5}, nil},
		{"openai/o3", nil, map[string]any{"max_completion_tokens": 50.0}, []string{"temperature"}},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			b := body(t, "openai", &config.Model{Model: c.model, MaxTokens: ptr[int64](50), Temperature: ptr(0.5), TopP: ptr(0.5), ThinkingBudget: c.budget}, request())
			for k, v := range c.want {
				if !reflect.DeepEqual(b[k], v) {
					t.Errorf("%s = %v, want %v", k, b[k], v)
				}
			}
			for _, k := range c.absent {
				if _, ok := b[k]; ok {
					t.Errorf("%s sent: %v", k, b[k])
				}
			}
		})
	}
}

func TestAnthropicBody(t *testing.T) {
	b := body(t, "anthropic", &config.Model{Model: "claude-sonnet-4-5", Temperature: ptr(0.2)}, conversation())
	want := jsonOf(t, `{
		"model": "claude-sonnet-4-5", "stream": true, "max_tokens": 8192, "temperature": 0.2,
		"system": [{"type": "text", "text": "sys"}],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "deploy"}]},
			{"role": "assistant", "content": [
				{"type": "thinking", "thinking": "hmm", "signature": "sig1"},
				{"type": "redacted_thinking", "data": "opaque"},
				{"type": "text", "text": "Checking."},
				{"type": "tool_use", "id": "c1", "name": "shell", "input": {"cmd": "ls"}},
				{"type": "tool_use", "id": "c2", "name": "shell", "input": {"cmd": "pwd"}}]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "a b"}], "is_error": false},
				{"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": "denied"}], "is_error": true}]},
			{"role": "assistant", "content": [{"type": "text", "text": "Done?"}]},
			{"role": "user", "content": [{"type": "text", "text": "yes"}]}
		],
		"tools": [{"name": "shell", "description": "Run a command",
			"input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}]
	}`)
	if !reflect.DeepEqual(b, want) {
		got, _ := json.MarshalIndent(b, "", " ")
		t.Errorf("body:\n%s", got)
	}
}

func TestAnthropicThinkingBudget(t *testing.T) {
	b := body(t, "anthropic", &config.Model{Model: "claude", Temperature: ptr(0.2), ThinkingBudget: &config.ThinkingBudget{Effort: "medium"}}, request())
	if !reflect.DeepEqual(b["thinking"], jsonOf(t, `{"type":"enabled","budget_tokens":8192}`)) || b["max_tokens"] != 16384.0 {
		t.Errorf("thinking %v, max_tokens %v", b["thinking"], b["max_tokens"])
	}
	if _, ok := b["temperature"]; ok {
		t.Error("temperature sent with thinking")
	}
	_, err := model.New(&config.Model{Name: "m", Provider: "anthropic", Model: "claude", MaxTokens: ptr[int64](2000), ThinkingBudget: &config.ThinkingBudget{Tokens: 4000}}, fastOpts(env(map[string]string{"ANTHROPIC_API_KEY": "k"})))
	if err == nil {
		t.Error("max_tokens below the thinking budget accepted")
	}
}

// Thinking blocks come back signed in the turn, and are sent back as they came.
func TestAnthropicThinkingRoundTrip(t *testing.T) {
	srv := fakellm.New(fakellm.Anthropic,
		fakellm.Reply{
			Thinking: []fakellm.Thinking{{Text: "I should list the files — first.", Signature: "EqQBCkgIARABGAIiQL"}, {Redacted: "EmwKAhgBEgy3va3pzix"}},
			Calls:    []fakellm.Call{{ID: "toolu_1", Name: "shell", Args: []string{`{"cmd":`, `"ls"}`}}},
		},
		fakellm.Reply{Text: []string{"done"}},
	)
	defer srv.Close()
	m := newModel(t, "anthropic", srv.URL, fastOpts(env(map[string]string{"ANTHROPIC_API_KEY": "k"})))
	req := request()
	t1, err := m.Turn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	wantThinking := []exec.Thinking{{Text: "I should list the files — first.", Signature: "EqQBCkgIARABGAIiQL"}, {Redacted: "EmwKAhgBEgy3va3pzix"}}
	if !reflect.DeepEqual(t1.Message.Thinking, wantThinking) {
		t.Fatalf("thinking %+v", t1.Message.Thinking)
	}
	// Through JSON, as a session would keep it.
	var kept exec.Message
	data, _ := json.Marshal(t1.Message)
	if err := json.Unmarshal(data, &kept); err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, kept, exec.Message{Role: exec.RoleTool, ToolCallID: "toolu_1", ToolName: "shell", Text: "a.txt"})
	if _, err := m.Turn(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var b struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(srv.Requests()[1].Body), &b); err != nil {
		t.Fatal(err)
	}
	got := b.Messages[1].Content
	want := []map[string]any{
		{"type": "thinking", "thinking": "I should list the files — first.", "signature": "EqQBCkgIARABGAIiQL"},
		{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
		{"type": "tool_use", "id": "toolu_1", "name": "shell", "input": map[string]any{"cmd": "ls"}},
	}
	if b.Messages[1].Role != "assistant" || !reflect.DeepEqual(got, want) {
		t.Errorf("assistant message sent back: %v", got)
	}
}
