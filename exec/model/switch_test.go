package model

import (
	"encoding/json"
	"testing"

	"github.com/hitl-dev/hitl/exec"
)

func TestSwitchPicksFromConversation(t *testing.T) {
	call := func(id, name, args string) exec.ToolCall {
		return exec.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
	}
	asst := func(calls ...exec.ToolCall) exec.Message {
		return exec.Message{Role: exec.RoleAssistant, ToolCalls: calls}
	}
	result := func(id string, isErr bool) exec.Message {
		return exec.Message{Role: exec.RoleTool, ToolCallID: id, IsError: isErr}
	}
	user := exec.Message{Role: exec.RoleUser, Text: "hi"}
	tests := []struct {
		name string
		msgs []exec.Message
		want string
	}{
		{"first turn", []exec.Message{user}, ""},
		{"after a routed tool", []exec.Message{user, asst(call("1", "read_file", `{}`)), result("1", false)}, "fast"},
		{"first routed call wins", []exec.Message{user, asst(call("1", "think", `{}`), call("2", "shell", `{}`), call("3", "read_file", `{}`)), result("1", false), result("2", false), result("3", false)}, "slow"},
		{"only the turn right after", []exec.Message{user, asst(call("1", "read_file", `{}`)), result("1", false), asst(), {Role: exec.RoleUser, Text: "more"}}, ""},
		{"after an unrouted tool", []exec.Message{user, asst(call("1", "think", `{}`)), result("1", false)}, ""},
		{"picked", []exec.Message{user, asst(call("1", ChangeModelTool, `{"model":"big"}`)), result("1", false)}, "big"},
		{"picked stays", []exec.Message{user, asst(call("1", ChangeModelTool, `{"model":"big"}`)), result("1", false), asst(call("2", "think", `{}`)), result("2", false)}, "big"},
		{"routed beats picked", []exec.Message{user, asst(call("1", ChangeModelTool, `{"model":"big"}`)), result("1", false), asst(call("2", "read_file", `{}`)), result("2", false)}, "fast"},
		{"reverted", []exec.Message{user, asst(call("1", ChangeModelTool, `{"model":"big"}`)), result("1", false), asst(call("2", RevertModelTool, `{}`)), result("2", false)}, ""},
		{"refused change", []exec.Message{user, asst(call("1", ChangeModelTool, `{"model":"nope"}`)), result("1", true)}, ""},
		{"unknown model ignored", []exec.Message{user, asst(call("1", ChangeModelTool, `{"model":"nope"}`)), result("1", false)}, ""},
		{"unanswered change", []exec.Message{user, asst(call("1", ChangeModelTool, `{"model":"big"}`))}, ""},
		{"bad arguments", []exec.Message{user, asst(call("1", ChangeModelTool, `{"model":`)), result("1", false)}, ""},
	}
	s := &Switch{alts: map[string]exec.Model{"fast": nil, "slow": nil, "big": nil}, Tools: map[string]string{"read_file": "fast", "shell": "slow"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Current(tt.msgs); got != tt.want {
				t.Errorf("model %q, want %q", got, tt.want)
			}
		})
	}
}
