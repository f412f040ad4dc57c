package script

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

func model(entries ...config.ScriptEntry) *Model {
	return New(&config.Model{Name: "m", Script: entries}, "hi")
}

func toolResult(text string) exec.Message {
	return exec.Message{Role: exec.RoleTool, ToolCallID: "c", Text: text}
}

func TestTurn(t *testing.T) {
	tests := []struct {
		name     string
		entries  []config.ScriptEntry
		history  []exec.Message
		text     string
		args     string
		errMatch string
	}{
		{name: "text", entries: []config.ScriptEntry{{Text: "hello"}}, text: "hello"},
		{name: "message", entries: []config.ScriptEntry{{Text: "you said {{.Message}}"}}, text: "you said hi"},
		{name: "last decoded", entries: []config.ScriptEntry{{Text: "{{.Last.content}}"}}, history: []exec.Message{toolResult(`{"content":"staging"}`)}, text: "staging"},
		{name: "last string", entries: []config.ScriptEntry{{Text: "{{.Last}}"}}, history: []exec.Message{toolResult("plain")}, text: "plain"},
		{name: "results", entries: []config.ScriptEntry{{Text: "{{len .Results}} {{index .Results 0}}"}}, history: []exec.Message{toolResult("a"), toolResult("b")}, text: "2 a"},
		{name: "when false skips", entries: []config.ScriptEntry{{When: "false", Text: "no"}, {Text: "yes"}}, text: "yes"},
		{name: "when empty skips", entries: []config.ScriptEntry{{When: "{{if false}}x{{end}}", Text: "no"}, {Text: "yes"}}, text: "yes"},
		{name: "when true plays", entries: []config.ScriptEntry{{When: "{{.Last.ok}}", Text: "played"}}, history: []exec.Message{toolResult(`{"ok":true}`)}, text: "played"},
		{name: "arguments_json boolean", entries: []config.ScriptEntry{{ToolCalls: []config.ScriptCall{{Name: "verdict", ArgumentsJSON: `{"approved": {{.Last.content}}}`}}}}, history: []exec.Message{toolResult(`{"content":true}`)}, args: `{"approved": true}`},
		{name: "arguments templates", entries: []config.ScriptEntry{{ToolCalls: []config.ScriptCall{{Name: "shell", Arguments: json.RawMessage(`{"cmd":"echo {{.Message}}","n":1}`)}}}}, args: `{"cmd":"echo hi","n":1}`},
		{name: "arguments keep & and >", entries: []config.ScriptEntry{{ToolCalls: []config.ScriptCall{{Name: "shell", Arguments: json.RawMessage(`{"cmd":"a && b > c"}`)}}}}, args: `{"cmd":"a && b > c"}`},
		{name: "missing key", entries: []config.ScriptEntry{{Text: "{{.Last.nope}}"}}, history: []exec.Message{toolResult(`{"a":1}`)}, errMatch: "map has no entry for key"},
		{name: "ran out", entries: []config.ScriptEntry{{When: "false", Text: "x"}}, errMatch: "the script ran out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := append([]exec.Message{{Role: exec.RoleUser, Text: "hi"}, {Role: exec.RoleAssistant}}, tt.history...)
			turn, err := model(tt.entries...).Turn(context.Background(), exec.Request{Messages: msgs})
			if tt.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
					t.Fatalf("err = %v, want %q", err, tt.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if turn.Message.Text != tt.text {
				t.Errorf("text = %q, want %q", turn.Message.Text, tt.text)
			}
			if tt.args != "" && (len(turn.Message.ToolCalls) != 1 || string(turn.Message.ToolCalls[0].Arguments) != tt.args) {
				t.Errorf("calls = %+v, want args %s", turn.Message.ToolCalls, tt.args)
			}
		})
	}
}

func TestStateRestore(t *testing.T) {
	m := model(config.ScriptEntry{Text: "one"}, config.ScriptEntry{Text: "two"})
	if _, err := m.Turn(context.Background(), exec.Request{}); err != nil {
		t.Fatal(err)
	}
	m2 := model(config.ScriptEntry{Text: "one"}, config.ScriptEntry{Text: "two"})
	if err := m2.Restore(m.State()); err != nil {
		t.Fatal(err)
	}
	turn, err := m2.Turn(context.Background(), exec.Request{})
	if err != nil || turn.Message.Text != "two" {
		t.Fatalf("after restore: %+v %v", turn, err)
	}
}
