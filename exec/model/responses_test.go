package model_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
)

// newSSEServer answers each request with the next of bodies, a whole
// event stream.
func newSSEServer(t *testing.T, bodies ...string) *geminiServer {
	var replies []geminiReply
	for _, b := range bodies {
		replies = append(replies, geminiReply{raw: b})
	}
	return newGeminiServer(t, replies...)
}

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var typ struct{ Type string }
		_ = json.Unmarshal([]byte(e), &typ)
		b.WriteString("event: " + typ.Type + "\ndata: " + e + "\n\n")
	}
	return b.String()
}

var responsesCall = sse(
	`{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]},"sequence_number":0}`,
	`{"type":"response.output_item.added","item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"},"output_index":0,"sequence_number":1}`,
	`{"type":"response.output_text.delta","delta":"Checking","item_id":"msg_1","output_index":0,"content_index":0,"sequence_number":2}`,
	`{"type":"response.output_item.added","item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_A","name":"shell"},"output_index":1,"sequence_number":3}`,
	`{"type":"response.function_call_arguments.delta","delta":"{\"cmd\":","item_id":"fc_1","output_index":1,"sequence_number":4}`,
	`{"type":"response.function_call_arguments.delta","delta":"\"ls\"}","item_id":"fc_1","output_index":1,"sequence_number":5}`,
	`{"type":"response.output_item.done","item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"cmd\":\"ls\"}","call_id":"call_A","name":"shell"},"output_index":1,"sequence_number":6}`,
	`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":21,"output_tokens":9,"total_tokens":30}},"sequence_number":7}`,
)

var responsesText = sse(
	`{"type":"response.output_text.delta","delta":"a.txt is ","item_id":"msg_2","output_index":0,"content_index":0,"sequence_number":0}`,
	`{"type":"response.output_text.delta","delta":"there","item_id":"msg_2","output_index":0,"content_index":0,"sequence_number":1}`,
	`{"type":"response.completed","response":{"id":"resp_2","status":"completed","output":[],"usage":{"input_tokens":40,"output_tokens":3,"total_tokens":43}},"sequence_number":2}`,
)

// A providers: entry with api_type openai_responses talks the Responses
// API: POST /responses with the instructions, the conversation as input
// items and the tools; the function call and text of the stream come back
// as the turn, and the call's output goes back as function_call_output.
func TestResponsesAPI(t *testing.T) {
	srv := newSSEServer(t, responsesCall, responsesText)
	cfg := &config.Model{Name: "r", Provider: "gw", API: config.APIResponses, Custom: true, Model: "gpt-5", BaseURL: srv.URL + "/v1", TokenKey: "GW_KEY",
		MaxTokens: ptr(int64(500)), ThinkingBudget: &config.ThinkingBudget{Effort: "low"}}
	m, err := model.New(cfg, fastOpts(env(map[string]string{"GW_KEY": "gw-secret"})))
	if err != nil {
		t.Fatal(err)
	}
	req := request()
	t1, err := m.Turn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := exec.Turn{Message: exec.Message{Role: exec.RoleAssistant, Text: "Checking", ToolCalls: []exec.ToolCall{{ID: "call_A", Name: "shell", Arguments: json.RawMessage(`{"cmd":"ls"}`)}}},
		Usage: exec.Usage{InputTokens: 21, OutputTokens: 9}}
	if !reflect.DeepEqual(t1, want) {
		t.Fatalf("turn 1 %+v", t1)
	}
	req.Messages = append(req.Messages, t1.Message, exec.Message{Role: exec.RoleTool, ToolCallID: "call_A", ToolName: "shell", Text: "a.txt"})
	t2, err := m.Turn(context.Background(), req)
	if err != nil || t2.Message.Text != "a.txt is there" || t2.Usage.InputTokens != 40 {
		t.Fatalf("turn 2 %+v err %v", t2, err)
	}
	reqs := srv.requests()
	if len(reqs) != 2 || reqs[0].path != "/v1/responses" || reqs[0].key != "Bearer gw-secret" {
		t.Fatalf("requests %+v", reqs)
	}
	wantBody := jsonOf(t, `{"model":"gpt-5","stream":true,"store":false,"instructions":"You are a test.","max_output_tokens":500,
		"reasoning":{"effort":"low"},
		"input":[{"role":"user","content":"hello"}],
		"tools":[{"type":"function","name":"shell","description":"Run a command","strict":false,
			"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}]}`)
	if !reflect.DeepEqual(reqs[0].body, wantBody) {
		got, _ := json.Marshal(reqs[0].body)
		t.Errorf("first body %s", got)
	}
	input, _ := json.Marshal(reqs[1].body["input"])
	wantInput := `[{"content":"hello","role":"user"},{"content":"Checking","role":"assistant"},` +
		`{"arguments":"{\"cmd\":\"ls\"}","call_id":"call_A","name":"shell","type":"function_call"},` +
		`{"call_id":"call_A","output":"a.txt","type":"function_call_output"}]`
	if string(input) != wantInput {
		t.Errorf("second input\n got %s\nwant %s", input, wantInput)
	}
}

// A failed response is an error with the API's message, not retried.
func TestResponsesFailed(t *testing.T) {
	srv := newSSEServer(t, sse(`{"type":"response.failed","response":{"id":"r","status":"failed","output":[],"error":{"code":"server_error","message":"the model broke"}},"sequence_number":0}`))
	cfg := &config.Model{Name: "r", Provider: "openai", API: config.APIResponses, Model: "gpt-5", BaseURL: srv.URL}
	m, err := model.New(cfg, fastOpts(env(map[string]string{"OPENAI_API_KEY": "k"})))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Turn(context.Background(), request())
	if err == nil || !strings.Contains(err.Error(), "the model broke") || len(srv.requests()) != 1 {
		t.Fatalf("err %v after %d requests", err, len(srv.requests()))
	}
}

// Penalties do not exist in the Responses API: a model that sets one is
// refused, not sent without it.
func TestResponsesRefusesPenalties(t *testing.T) {
	cfg := &config.Model{Name: "r", Provider: "openai", API: config.APIResponses, Model: "gpt-5", BaseURL: "http://127.0.0.1:1", FrequencyPenalty: ptr(0.5)}
	if _, err := model.New(cfg, fastOpts(env(map[string]string{"OPENAI_API_KEY": "k"}))); err == nil || !strings.Contains(err.Error(), "Responses API") {
		t.Fatalf("err %v", err)
	}
}
