package exec

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// turns is a model that plays fixed turns.
type turns []Message

func (t *turns) Turn(ctx context.Context, req Request) (Turn, error) {
	if len(*t) == 0 {
		return Turn{}, errors.New("no more turns")
	}
	m := (*t)[0]
	*t = (*t)[1:]
	return Turn{Message: m, Usage: Usage{InputTokens: 10, OutputTokens: 1}}, nil
}

// echoTool returns its arguments; "end" ends the run.
type echoTool struct {
	name  string
	calls int
	end   *Outcome
	err   error
}

func (e *echoTool) Spec() ToolSpec {
	return ToolSpec{Name: e.name, Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)}
}

func (e *echoTool) Call(ctx context.Context, c ToolCall) (Result, error) {
	e.calls++
	return Result{Text: string(c.Arguments), End: e.end}, e.err
}

type sink []Event

func (s *sink) Emit(e Event) { *s = append(*s, e) }

func call(id, name, args string) ToolCall {
	return ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func TestRun(t *testing.T) {
	stop := &Outcome{Status: StatusRejected, Text: "no"}
	tests := []struct {
		name       string
		turns      turns
		tool       *echoTool
		max        int
		required   bool
		status     Status
		errMatch   string
		calls      int
		lastResult string
	}{
		{name: "text ends", turns: turns{{Text: "done"}}, tool: &echoTool{name: "t"}, status: StatusSuccess},
		{name: "tool then text", turns: turns{{ToolCalls: []ToolCall{call("1", "t", `{"n":1}`)}}, {Text: "ok"}}, tool: &echoTool{name: "t"}, status: StatusSuccess, calls: 1},
		{name: "unknown tool is an error result", turns: turns{{ToolCalls: []ToolCall{call("1", "nope", `{}`)}}, {Text: "ok"}}, tool: &echoTool{name: "t"}, status: StatusSuccess, lastResult: `unknown tool "nope"`},
		{name: "invalid json", turns: turns{{ToolCalls: []ToolCall{call("1", "t", `{`)}}, {Text: "ok"}}, tool: &echoTool{name: "t"}, status: StatusSuccess, lastResult: "not valid JSON"},
		{name: "schema mismatch", turns: turns{{ToolCalls: []ToolCall{call("1", "t", `{"n":"x"}`)}}, {Text: "ok"}}, tool: &echoTool{name: "t"}, status: StatusSuccess, lastResult: "invalid arguments for t"},
		{name: "empty arguments are {}", turns: turns{{ToolCalls: []ToolCall{call("1", "t", ``)}}, {Text: "ok"}}, tool: &echoTool{name: "t"}, status: StatusSuccess, calls: 1},
		{name: "end outcome skips later calls", turns: turns{{ToolCalls: []ToolCall{call("1", "t", `{}`), call("2", "t", `{}`)}}}, tool: &echoTool{name: "t", end: stop}, status: StatusRejected, calls: 1},
		{name: "required verdict missing", turns: turns{{Text: "done"}}, tool: &echoTool{name: "t"}, required: true, status: StatusRejected},
		{name: "max iterations", turns: turns{{ToolCalls: []ToolCall{call("1", "t", `{}`)}}, {ToolCalls: []ToolCall{call("2", "t", `{}`)}}, {Text: "late"}}, tool: &echoTool{name: "t"}, max: 2, errMatch: "reached max_iterations (2 model turns)"},
		{name: "tool error stops", turns: turns{{ToolCalls: []ToolCall{call("1", "t", `{}`)}}}, tool: &echoTool{name: "t", err: errors.New("boom")}, errMatch: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events sink
			r := &Runner{Model: &tt.turns, Tools: []Tool{tt.tool}, MaxIterations: tt.max, VerdictRequired: tt.required, Sink: &events}
			st := &State{Messages: []Message{{Role: RoleUser, Text: "go"}}}
			out, err := r.Run(context.Background(), st)
			if tt.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
					t.Fatalf("err = %v, want %q", err, tt.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != tt.status {
				t.Errorf("status %s, want %s", out.Status, tt.status)
			}
			if tt.calls > 0 && tt.tool.calls != tt.calls {
				t.Errorf("%d calls, want %d", tt.tool.calls, tt.calls)
			}
			if tt.lastResult != "" {
				var last *ToolResultEvent
				for _, e := range events {
					if r, ok := e.(*ToolResultEvent); ok {
						last = r
					}
				}
				if last == nil || !last.IsError || !strings.Contains(last.Result, tt.lastResult) {
					t.Errorf("last result %+v, want an error containing %q", last, tt.lastResult)
				}
			}
			if st.Usage.InputTokens != int64(10*st.Iterations) {
				t.Errorf("usage %+v after %d turns", st.Usage, st.Iterations)
			}
		})
	}
}

func TestRunResumesPendingCalls(t *testing.T) {
	tool := &echoTool{name: "t"}
	model := turns{{Text: "after"}}
	st := &State{Messages: []Message{
		{Role: RoleUser, Text: "go"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{call("1", "t", `{"n":1}`), call("2", "t", `{"n":2}`)}},
		{Role: RoleTool, ToolCallID: "1", Text: "done before"},
	}, Iterations: 1}
	out, err := (&Runner{Model: &model, Tools: []Tool{tool}}).Run(context.Background(), st)
	if err != nil || out.Text != "after" {
		t.Fatalf("%+v %v", out, err)
	}
	if tool.calls != 1 || st.Messages[3].ToolCallID != "2" {
		t.Fatalf("calls %d, messages %+v", tool.calls, st.Messages)
	}
}

func TestToolCallJSONKeepsInvalidArguments(t *testing.T) {
	c := call("1", "t", `{nope`)
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back ToolCall
	if err := json.Unmarshal(data, &back); err != nil || string(back.Arguments) != `{nope` {
		t.Fatalf("%s → %+v %v", data, back, err)
	}
}
