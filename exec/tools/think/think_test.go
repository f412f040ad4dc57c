package think

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hitl-dev/hitl/exec"
)

var _ exec.Tool = (*Tool)(nil)

func call(t *testing.T, tool *Tool, args string) exec.Result {
	t.Helper()
	res, err := tool.Call(context.Background(), exec.ToolCall{ID: "c", Name: Name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Call(%s): %v", args, err)
	}
	return res
}

// The result is cagent's: every thought so far under "Thoughts:"; bad
// arguments are error results, never errors, and leave the log as it was.
func TestThinkResult(t *testing.T) {
	tool := New(Options{})
	steps := []struct {
		args    string
		want    string
		isError bool
	}{
		{`{"thought":"first"}`, "Thoughts:\nfirst", false},
		{`{"thought":"second\nline"}`, "Thoughts:\nfirst\nsecond\nline", false},
		{`{}`, "invalid arguments: thought is required", true},
		{`{"thought":3}`, "", true},
		{`not json`, "", true},
		{`{"thought":""}`, "Thoughts:\nfirst\nsecond\nline\n", false},
	}
	for _, s := range steps {
		res := call(t, tool, s.args)
		if res.IsError != s.isError || (s.want != "" && res.Text != s.want) {
			t.Errorf("%s: got %+v, want IsError=%v %q", s.args, res, s.isError, s.want)
		}
	}
}

func TestSpecIsCagents(t *testing.T) {
	s := New(Options{}).Spec()
	var schema struct {
		Properties map[string]struct{ Type string } `json:"properties"`
		Required   []string                         `json:"required"`
	}
	if err := json.Unmarshal(s.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if s.Name != "think" || schema.Properties["thought"].Type != "string" || len(schema.Required) != 1 || schema.Required[0] != "thought" {
		t.Errorf("spec: %+v", s)
	}
}

// A resumed run has the thoughts that reached the log, and only those.
func TestResume(t *testing.T) {
	msgs := []exec.Message{
		{Role: exec.RoleUser, Text: "go"},
		{Role: exec.RoleAssistant, ToolCalls: []exec.ToolCall{
			{ID: "1", Name: Name, Arguments: json.RawMessage(`{"thought":"a"}`)},
			{ID: "2", Name: Name, Arguments: json.RawMessage(`{"thought":"denied"}`)},
			{ID: "3", Name: "shell", Arguments: json.RawMessage(`{"thought":"not think"}`)},
		}},
		{Role: exec.RoleTool, ToolCallID: "1", ToolName: Name, Text: "Thoughts:\na"},
		{Role: exec.RoleTool, ToolCallID: "2", ToolName: Name, IsError: true, Text: "denied"},
		{Role: exec.RoleTool, ToolCallID: "3", ToolName: "shell", Text: "x"},
		// The same id again in a later turn (some providers number per turn).
		{Role: exec.RoleAssistant, ToolCalls: []exec.ToolCall{
			{ID: "1", Name: Name, Arguments: json.RawMessage(`{"thought":"b"}`)},
			{ID: "2", Name: Name, Arguments: json.RawMessage(`{"thought":"pending"}`)},
		}},
		{Role: exec.RoleTool, ToolCallID: "1", ToolName: Name, Text: "Thoughts:\na\nb"},
	}
	tool := New(Options{})
	call(t, tool, `{"thought":"stale"}`)
	tool.Resume(msgs)
	if got := call(t, tool, `{"thought":"c"}`).Text; got != "Thoughts:\na\nb\nc" {
		t.Errorf("after resume: %q", got)
	}
}
