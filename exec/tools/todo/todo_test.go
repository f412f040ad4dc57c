package todo

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec"
)

func byName(s *Toolset) map[string]exec.Tool {
	m := map[string]exec.Tool{}
	for _, t := range s.Tools() {
		m[t.Spec().Name] = t
	}
	return m
}

func run(t *testing.T, tools map[string]exec.Tool, name, args string) exec.Result {
	t.Helper()
	tool, ok := tools[name]
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	res, err := tool.Call(context.Background(), exec.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	return res
}

// Each step's result is cagent's JSON, byte for byte.
func TestResultShapes(t *testing.T) {
	tools := byName(New(Options{}))
	steps := []struct {
		tool, args string
		want       string
		isError    bool
	}{
		{ListTodos, `{}`, `{"todos":[]}`, false},
		{CreateTodo, `{"description":"write tests"}`,
			`{"created":{"id":"todo_1","description":"write tests","status":"pending"},"all_todos":[{"id":"todo_1","description":"write tests","status":"pending"}],"reminder":"The following todos are still incomplete and MUST be completed: (pending) [todo_1] write tests"}`, false},
		{CreateTodos, `{"descriptions":["a","b"]}`,
			`{"created":[{"id":"todo_2","description":"a","status":"pending"},{"id":"todo_3","description":"b","status":"pending"}],"all_todos":[{"id":"todo_1","description":"write tests","status":"pending"},{"id":"todo_2","description":"a","status":"pending"},{"id":"todo_3","description":"b","status":"pending"}],"reminder":"The following todos are still incomplete and MUST be completed: (pending) [todo_1] write tests (pending) [todo_2] a (pending) [todo_3] b"}`, false},
		{UpdateTodos, `{"updates":[{"id":"todo_2","status":"in-progress"},{"id":"todo_9","status":"completed"}]}`,
			`{"updated":[{"id":"todo_2","status":"in-progress"}],"not_found":["todo_9"],"all_todos":[{"id":"todo_1","description":"write tests","status":"pending"},{"id":"todo_2","description":"a","status":"in-progress"},{"id":"todo_3","description":"b","status":"pending"}],"reminder":"The following todos are still incomplete and MUST be completed: (in-progress) [todo_2] a (pending) [todo_1] write tests (pending) [todo_3] b"}`, false},
		{UpdateTodos, `{"updates":[{"id":"todo_9","status":"completed"}]}`,
			`{"not_found":["todo_9"],"all_todos":null}`, true},
		{UpdateTodos, `{"updates":[{"id":"todo_1","status":"completed"},{"id":"todo_2","status":"completed"},{"id":"todo_3","status":"completed"}]}`,
			`{"updated":[{"id":"todo_1","status":"completed"},{"id":"todo_2","status":"completed"},{"id":"todo_3","status":"completed"}],"all_todos":[{"id":"todo_1","description":"write tests","status":"completed"},{"id":"todo_2","description":"a","status":"completed"},{"id":"todo_3","description":"b","status":"completed"}]}`, false},
		{ListTodos, ``, `{"todos":[{"id":"todo_1","description":"write tests","status":"completed"},{"id":"todo_2","description":"a","status":"completed"},{"id":"todo_3","description":"b","status":"completed"}]}`, false},
		// Bad arguments: error results that say what is expected, list unchanged.
		{CreateTodo, `{}`, "invalid arguments: description is required", true},
		{CreateTodo, `{"description":"  "}`, "invalid arguments: a description is empty: say what the todo is", true},
		{CreateTodos, `{"descriptions":"a"}`, "", true},
		{CreateTodos, `{"descriptions":["ok",""]}`, "invalid arguments: a description is empty: say what the todo is", true},
		{UpdateTodos, `{"updates":[{"id":"todo_1","status":"done"}]}`, `invalid arguments: status "done" of "todo_1" is not one of pending, in-progress, completed`, true},
		{UpdateTodos, `{}`, "invalid arguments: updates is required", true},
		{CreateTodo, `{"description":"` + strings.Repeat("x", MaxDescription+1) + `"}`, "invalid arguments: a description has more than 10000 characters", true},
		{CreateTodo, `[`, "", true},
		{CreateTodo, `{"description":"c"}`,
			`{"created":{"id":"todo_4","description":"c","status":"pending"},"all_todos":[{"id":"todo_1","description":"write tests","status":"completed"},{"id":"todo_2","description":"a","status":"completed"},{"id":"todo_3","description":"b","status":"completed"},{"id":"todo_4","description":"c","status":"pending"}],"reminder":"The following todos are still incomplete and MUST be completed: (pending) [todo_4] c"}`, false},
	}
	for i, s := range steps {
		res := run(t, tools, s.tool, s.args)
		if res.IsError != s.isError || (s.want != "" && res.Text != s.want) {
			t.Errorf("step %d %s(%.60s):\n got %v %s\nwant %v %s", i, s.tool, s.args, res.IsError, res.Text, s.isError, s.want)
		}
	}
}

func TestListIsBounded(t *testing.T) {
	tools := byName(New(Options{}))
	many := make([]string, MaxTodos)
	for i := range many {
		many[i] = "x"
	}
	data, _ := json.Marshal(map[string]any{"descriptions": many})
	if res := run(t, tools, CreateTodos, string(data)); res.IsError {
		t.Fatalf("%d todos refused: %s", MaxTodos, res.Text)
	}
	res := run(t, tools, CreateTodo, `{"description":"one more"}`)
	if !res.IsError || !strings.Contains(res.Text, "at most 1000 todos") {
		t.Errorf("past the bound: %+v", res)
	}
}

func TestSpecsAreCagents(t *testing.T) {
	want := map[string][]string{
		CreateTodo:  {"description"},
		CreateTodos: {"descriptions"},
		UpdateTodos: {"updates"},
		ListTodos:   nil,
	}
	tools := New(Options{}).Tools()
	if len(tools) != len(want) {
		t.Fatalf("%d tools", len(tools))
	}
	for _, tool := range tools {
		s := tool.Spec()
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(s.Parameters, &schema); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		props, ok := want[s.Name]
		if !ok || schema.Type != "object" || len(schema.Properties) != len(props) {
			t.Errorf("%s: %s", s.Name, s.Parameters)
		}
		for _, p := range props {
			if schema.Properties[p] == nil {
				t.Errorf("%s lacks %s", s.Name, p)
			}
		}
	}
}

// A resumed run has the list of the last todo result that is not an error,
// and numbers new todos after the highest id.
func TestResume(t *testing.T) {
	first := New(Options{})
	tools := byName(first)
	var msgs []exec.Message
	record := func(name, args string) {
		res := run(t, tools, name, args)
		msgs = append(msgs,
			exec.Message{Role: exec.RoleAssistant, ToolCalls: []exec.ToolCall{{ID: "c", Name: name, Arguments: json.RawMessage(args)}}},
			exec.Message{Role: exec.RoleTool, ToolCallID: "c", ToolName: name, Text: res.Text, IsError: res.IsError})
	}
	record(CreateTodos, `{"descriptions":["a","b"]}`)
	record(UpdateTodos, `{"updates":[{"id":"todo_1","status":"completed"}]}`)
	record(UpdateTodos, `{"updates":[{"id":"todo_7","status":"completed"}]}`) // error result
	msgs = append(msgs,
		exec.Message{Role: exec.RoleTool, ToolCallID: "d", ToolName: CreateTodo, IsError: true, Text: "the call was not run: create_todo is denied"},
		exec.Message{Role: exec.RoleTool, ToolCallID: "e", ToolName: "shell", Text: "{}"})

	resumed := New(Options{})
	if err := resumed.Resume(msgs); err != nil {
		t.Fatal(err)
	}
	got := run(t, byName(resumed), CreateTodo, `{"description":"c"}`).Text
	want := `{"created":{"id":"todo_3","description":"c","status":"pending"},"all_todos":[{"id":"todo_1","description":"a","status":"completed"},{"id":"todo_2","description":"b","status":"pending"},{"id":"todo_3","description":"c","status":"pending"}],"reminder":"The following todos are still incomplete and MUST be completed: (pending) [todo_2] b (pending) [todo_3] c"}`
	if got != want {
		t.Errorf("after resume:\n got %s\nwant %s", got, want)
	}

	// No todo result: an empty list; a result that is not a list: an error.
	empty := New(Options{})
	if err := empty.Resume(msgs[4:]); err != nil {
		t.Fatal(err)
	}
	if got := run(t, byName(empty), ListTodos, `{}`).Text; got != `{"todos":[]}` {
		t.Errorf("no todo result: %s", got)
	}
	bad := []exec.Message{{Role: exec.RoleTool, ToolCallID: "x", ToolName: ListTodos, Text: "not json"}}
	if err := New(Options{}).Resume(bad); err == nil || !strings.Contains(err.Error(), "call x") {
		t.Errorf("corrupt result: %v", err)
	}
}
