package exec

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// recorder plays turns and keeps the tools each request offered.
type recorder struct {
	turns  turns
	offers [][]string
}

func (r *recorder) Turn(ctx context.Context, req Request) (Turn, error) {
	var names []string
	for _, s := range req.Tools {
		names = append(names, s.Name)
	}
	r.offers = append(r.offers, names)
	return r.turns.Turn(ctx, req)
}

type describedTool struct {
	echoTool
	desc string
}

func (d *describedTool) Spec() ToolSpec {
	s := d.echoTool.Spec()
	s.Description = d.desc
	return s
}

func deferredSet() (*Deferral, map[string]*describedTool) {
	tools := map[string]*describedTool{
		"write_file": {echoTool{name: "write_file"}, "Write a file."},
		"read_file":  {echoTool{name: "read_file"}, "Read a file."},
		"remote_x":   {echoTool{name: "remote_x"}, "Reach a REMOTE host."},
	}
	return NewDeferral([]Tool{tools["write_file"], tools["read_file"], tools["remote_x"]}), tools
}

func textCall(id, name, args string) Message {
	return Message{Role: RoleAssistant, ToolCalls: []ToolCall{call(id, name, args)}}
}

func TestDeferred(t *testing.T) {
	base := []string{"t", "search_tool", "add_tool"}
	tests := []struct {
		name    string
		history []Message // before the run (a resumed one)
		turns   turns
		offers  [][]string     // the tools of each request
		results []string       // the tool results, in order ("!" first: an error result)
		calls   map[string]int // calls each deferred tool got
		check   func(*testing.T, *State)
	}{
		{
			name:   "not offered until activated, then from the next turn",
			turns:  turns{textCall("1", "add_tool", `{"name":"write_file"}`), textCall("2", "write_file", `{"n":1}`), {Text: "done"}},
			offers: [][]string{base, append(slices.Clone(base), "write_file"), append(slices.Clone(base), "write_file")},
			results: []string{
				"Tool 'write_file' has been activated and is now available for use.\n\nDescription: Write a file.",
				`{"n":1}`,
			},
			calls: map[string]int{"write_file": 1},
		},
		{
			name:  "a call in the turn of its add_tool is a call of an unknown tool",
			turns: turns{{ToolCalls: []ToolCall{call("1", "add_tool", `{"name":"write_file"}`), call("2", "write_file", `{}`)}}, {Text: "done"}},
			results: []string{
				"Tool 'write_file' has been activated and is now available for use.\n\nDescription: Write a file.",
				`!unknown tool "write_file"; the tools available are: add_tool, search_tool, t`,
			},
			calls: map[string]int{"write_file": 0},
		},
		{
			name:    "never activated",
			turns:   turns{textCall("1", "read_file", `{}`), {Text: "done"}},
			offers:  [][]string{base, base},
			results: []string{`!unknown tool "read_file"; the tools available are: add_tool, search_tool, t`},
			calls:   map[string]int{"read_file": 0},
		},
		{
			name:  "add_tool of an unknown or not deferred tool, twice, odd",
			turns: turns{{ToolCalls: []ToolCall{call("1", "add_tool", `{"name":"nope"}`), call("2", "add_tool", `{"name":"t"}`), call("3", "add_tool", `{"name":"read_file"}`), call("4", "add_tool", `{"name":"read_file"}`), call("5", "add_tool", `{"name":"it's \"odd\"\n"}`)}}, textCall("6", "add_tool", `{"name":"read_file"}`), {Text: "done"}},
			results: []string{
				"!Tool 'nope' not found.",
				"!Tool 't' not found.",
				"Tool 'read_file' has been activated and is now available for use.\n\nDescription: Read a file.",
				"Tool 'read_file' is already active",
				"!Tool 'it's \"odd\"\n' not found.",
				"Tool 'read_file' is already active",
			},
		},
		{
			name:    "add_tool without a name is refused by its schema",
			turns:   turns{textCall("1", "add_tool", `{}`), textCall("2", "add_tool", `{"name":"x","extra":1}`), {Text: "done"}},
			results: []string{"!invalid arguments for add_tool", "!invalid arguments for add_tool"},
		},
		{
			name: "search by name or description, any case, sorted, active ones left out",
			turns: turns{
				{ToolCalls: []ToolCall{call("1", "search_tool", `{"query":"READ"}`), call("2", "search_tool", `{"query":"remote"}`), call("3", "search_tool", `{"query":""}`), call("4", "search_tool", `{"query":"zzz"}`)}},
				{ToolCalls: []ToolCall{call("5", "add_tool", `{"name":"read_file"}`), call("6", "search_tool", `{"query":""}`), call("7", "search_tool", `{"query":"read"}`)}},
				{Text: "done"},
			},
			results: []string{
				"Found 1 deferred tool(s):\n" + `[{"name":"read_file","description":"Read a file."}]`,
				"Found 1 deferred tool(s):\n" + `[{"name":"remote_x","description":"Reach a REMOTE host."}]`,
				"Found 3 deferred tool(s):\n" + `[{"name":"read_file","description":"Read a file."},{"name":"remote_x","description":"Reach a REMOTE host."},{"name":"write_file","description":"Write a file."}]`,
				"!No deferred tools found matching 'zzz'",
				"Tool 'read_file' has been activated",
				"Found 2 deferred tool(s):\n" + `[{"name":"remote_x","description":"Reach a REMOTE host."},{"name":"write_file","description":"Write a file."}]`,
				"!No deferred tools found matching 'read'",
			},
		},
		{
			name:  "a huge name or query is not repeated whole",
			turns: turns{{ToolCalls: []ToolCall{call("1", "add_tool", `{"name":"`+strings.Repeat("x", 100000)+`"}`), call("2", "search_tool", `{"query":"`+strings.Repeat("é", 50000)+`"}`)}}, {Text: "done"}},
			check: func(t *testing.T, st *State) {
				for _, m := range st.Messages[2:4] {
					if m.Role != RoleTool || !m.IsError || len(m.Text) > 300 || !strings.Contains(m.Text, "…") {
						t.Errorf("%d bytes: %.80q", len(m.Text), m.Text)
					}
				}
			},
		},
		{
			name: "a resumed run keeps the activation (the description changed since), and runs the pending call",
			history: []Message{
				{Role: RoleUser, Text: "go"},
				textCall("1", "add_tool", `{"name":"write_file"}`),
				{Role: RoleTool, ToolCallID: "1", ToolName: "add_tool", Text: "Tool 'write_file' has been activated and is now available for use.\n\nDescription: Old words."},
				textCall("2", "write_file", `{"n":2}`),
			},
			turns:   turns{{Text: "done"}},
			offers:  [][]string{append(slices.Clone(base), "write_file")},
			results: []string{"Tool 'write_file' has been activated", `{"n":2}`},
			calls:   map[string]int{"write_file": 1},
		},
		{
			name: "what does not activate: a refused add_tool, another agent's, a result of other words",
			history: []Message{
				{Role: RoleUser, Text: "go"},
				{Role: RoleAssistant, ToolCalls: []ToolCall{call("1", "add_tool", `{"name":"write_file"}`), call("2", "add_tool", `{"name":"read_file"}`), call("3", "add_tool", `{"name":"remote_x"}`)}},
				{Role: RoleTool, ToolCallID: "1", ToolName: "add_tool", IsError: true, Text: "the call was not run: add_tool is denied by the permissions rule \"add_tool\""},
				{Role: RoleTool, ToolCallID: "2", ToolName: "add_tool", Text: "blocked by a hook"},
				{Role: RoleTool, ToolCallID: "3", ToolName: "add_tool", Text: "Tool 'remote_x' is already active"},
				{Role: RoleAssistant, Agent: "other", ToolCalls: []ToolCall{call("o-4", "add_tool", `{"name":"write_file"}`)}},
				{Role: RoleTool, ToolCallID: "o-4", ToolName: "add_tool", Text: "Tool 'write_file' is already active"},
			},
			turns:  turns{{Text: "done"}},
			offers: [][]string{append(slices.Clone(base), "remote_x")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, tools := deferredSet()
			m := &recorder{turns: tt.turns}
			r := &Runner{Model: m, Tools: append([]Tool{&echoTool{name: "t"}}, d.Tools()...), Deferral: d}
			st := &State{Messages: tt.history}
			if st.Messages == nil {
				st.Messages = []Message{{Role: RoleUser, Text: "go"}}
			}
			out, err := r.Run(context.Background(), st)
			if err != nil || out.Status != StatusSuccess {
				t.Fatalf("%v %v", out, err)
			}
			if tt.offers != nil && !slices.EqualFunc(m.offers, tt.offers, slices.Equal) {
				t.Errorf("offers %q\nwant   %q", m.offers, tt.offers)
			}
			var results []Message
			for _, msg := range st.Messages {
				if msg.Role == RoleTool {
					results = append(results, msg)
				}
			}
			if tt.history != nil && len(results) >= len(tt.results) {
				results = results[len(results)-len(tt.results):]
			}
			if tt.results != nil && len(results) != len(tt.results) {
				t.Fatalf("%d results, want %d: %+v", len(results), len(tt.results), results)
			}
			for i, want := range tt.results {
				wantErr := strings.HasPrefix(want, "!")
				want = strings.TrimPrefix(want, "!")
				if got := results[i]; got.IsError != wantErr || !strings.HasPrefix(got.Text, want) {
					t.Errorf("result %d: %q (error %v), want %q (error %v)", i, got.Text, got.IsError, want, wantErr)
				}
			}
			for name, n := range tt.calls {
				if got := tools[name].calls; got != n {
					t.Errorf("%s called %d times, want %d", name, got, n)
				}
			}
			if tt.check != nil {
				tt.check(t, st)
			}
		})
	}
}

// Without deferred tools nothing changes; with them, a tool both deferred
// and not is refused before the first turn.
func TestDeferredSetup(t *testing.T) {
	if NewDeferral(nil) != nil || NewDeferral(nil).Tools() != nil || NewDeferral(nil).Deferred() != nil {
		t.Fatal("an empty deferral is nil")
	}
	d := NewDeferral([]Tool{&echoTool{name: "t"}})
	r := &Runner{Model: &turns{{Text: "x"}}, Tools: append([]Tool{&echoTool{name: "t"}}, d.Tools()...), Deferral: d}
	_, err := r.Run(context.Background(), &State{Messages: []Message{{Role: RoleUser, Text: "go"}}})
	if err == nil || !strings.Contains(err.Error(), "tool t is both deferred and not") {
		t.Fatalf("err = %v", err)
	}
	specs := d.Tools()
	var params [2]map[string]any
	for i, s := range specs {
		if err := json.Unmarshal(s.Spec().Parameters, &params[i]); err != nil {
			t.Fatal(err)
		}
	}
	if specs[0].Spec().Name != SearchToolName || specs[1].Spec().Name != AddToolName || params[0]["additionalProperties"] != false {
		t.Fatalf("%+v", params)
	}
}
