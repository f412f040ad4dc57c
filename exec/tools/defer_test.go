package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// fixedTool answers every call with its result.
type fixedTool struct {
	name, server string
	res          exec.Result
	closed       bool
}

func (f *fixedTool) Spec() exec.ToolSpec { return exec.ToolSpec{Name: f.name} }
func (f *fixedTool) Call(context.Context, exec.ToolCall) (exec.Result, error) {
	return f.res, nil
}
func (f *fixedTool) Server() string { return f.server }
func (f *fixedTool) Close() error   { f.closed = true; return nil }

// A tooned tool gives a JSON object result as TOON, an error result too;
// anything else as it came. Its server and Close are the tool's.
func TestTooned(t *testing.T) {
	tests := []struct {
		name string
		res  exec.Result
		want exec.Result
	}{
		{name: "object", res: exec.Result{Text: `{"items":[{"id":1,"n":"a"},{"id":2,"n":"b"}],"total":2}`}, want: exec.Result{Text: "items[2]{id,n}:\n  1,a\n  2,b\ntotal: 2"}},
		{name: "error result", res: exec.Result{IsError: true, Text: `{"error":"not found","code":404}`}, want: exec.Result{IsError: true, Text: "code: 404\nerror: not found"}},
		{name: "array", res: exec.Result{Text: `[1,2]`}, want: exec.Result{Text: `[1,2]`}},
		{name: "text", res: exec.Result{Text: "deleted 1"}, want: exec.Result{Text: "deleted 1"}},
		{name: "lossy", res: exec.Result{Text: `{"id":12345678901234567890}`}, want: exec.Result{Text: `{"id":12345678901234567890}`}},
		{name: "end kept", res: exec.Result{Text: `{"a":1}`, End: &exec.Outcome{Status: exec.StatusSuccess}}, want: exec.Result{Text: "a: 1", End: &exec.Outcome{Status: exec.StatusSuccess}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &fixedTool{name: "x", server: "srv", res: tt.res}
			tool := &tooned{Tool: inner}
			got, err := tool.Call(context.Background(), exec.ToolCall{Name: "x", Arguments: json.RawMessage(`{}`)})
			if err != nil || got.Text != tt.want.Text || got.IsError != tt.want.IsError || (got.End == nil) != (tt.want.End == nil) {
				t.Fatalf("got %+v (%v), want %+v", got, err, tt.want)
			}
			if tool.Server() != "srv" {
				t.Errorf("server %q", tool.Server())
			}
			if err := Close([]exec.Tool{tool}); err != nil || !inner.closed {
				t.Errorf("Close did not reach the tool: %v", err)
			}
		})
	}
}

// A secret the tool's JSON spelled with an escape its mask did not know is
// masked in the TOON text, where it is spelled out.
func TestToonedMasks(t *testing.T) {
	secrets := &prompt.Secrets{}
	secrets.Add("hunter2-very-secret")
	inner := &fixedTool{name: "x", res: exec.Result{Text: `{"token":"\u0068unter2-very-secret"}`}}
	if masked := secrets.Mask(inner.res.Text); masked != inner.res.Text {
		t.Fatalf("the tool's own mask would have caught it: %s", masked)
	}
	res, err := (&tooned{Tool: inner}).Call(context.Background(), exec.ToolCall{Name: "x"})
	if err != nil || res.Text != "token: hunter2-very-secret" {
		t.Fatalf("unmasked: %q %v", res.Text, err)
	}
	res, err = (&tooned{Tool: inner, mask: secrets.Mask}).Call(context.Background(), exec.ToolCall{Name: "x"})
	if err != nil || strings.Contains(res.Text, "hunter2") || res.Text != "token: ***" {
		t.Fatalf("%q %v", res.Text, err)
	}
}

// Build: a toolset's deferred tools are held by the Deferral (gated and
// tooned as offered ones), its others offered with search_tool and add_tool
// after them; toon: wraps the tools it names, outside the gate.
func TestBuildDeferAndToon(t *testing.T) {
	a := &config.Agent{Toolsets: []*config.Toolset{
		{Type: "filesystem", IgnoreVCS: true, DeferTools: []string{"write_file", "edit_file"}},
		{Type: "todo", DeferAll: true, Toon: "_todos?$"},
		{Type: "think"},
	}}
	list, deferral, err := Build(&config.Config{Path: "a.yaml"}, a, Deps{WorkingDir: t.TempDir(), Permissions: config.Permissions{Ask: []string{"add_tool"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer Close(append(list, deferral.Deferred()...))
	want := []string{"read_file", "read_multiple_files", "list_directory", "directory_tree", "search_files_content", "create_directory", "remove_directory", "think", "search_tool", "add_tool"}
	if got := names(list); !slices.Equal(got, want) {
		t.Errorf("offered %v\nwant    %v", got, want)
	}
	if got := names(deferral.Deferred()); !slices.Equal(got, []string{"write_file", "edit_file", "create_todo", "create_todos", "update_todos", "list_todos"}) {
		t.Errorf("deferred %v", got)
	}
	if _, ok := deferral.Deferred()[0].(*gated); !ok {
		t.Errorf("deferred write_file is not gated: %T", deferral.Deferred()[0])
	}
	if _, ok := list[len(list)-1].(*gated); !ok {
		t.Errorf("add_tool, named by an ask rule, is not gated: %T", list[len(list)-1])
	}
	if _, ok := list[len(list)-2].(*gated); ok {
		t.Errorf("search_tool is gated")
	}
	for _, d := range deferral.Deferred() {
		_, isTooned := d.(*tooned)
		if wantTooned := strings.HasSuffix(d.Spec().Name, "_todo") || strings.HasSuffix(d.Spec().Name, "_todos"); isTooned != wantTooned {
			t.Errorf("%s tooned: %v", d.Spec().Name, isTooned)
		}
	}
	res := call(t, deferral.Deferred()[2], `{"description":"a"}`)
	if res.IsError || !strings.HasPrefix(res.Text, "all_todos[1]{description,id,status}:\n  a,todo_1,pending\ncreated:\n") {
		t.Errorf("create_todo: %q", res.Text)
	}
	got := Instructions(a, Deps{})
	if len(got) != 2 || !strings.HasPrefix(got[0], "## Filesystem Tools") || !strings.HasPrefix(got[1], "## Think Tool") {
		t.Errorf("a toolset all deferred adds no guidance, as in cagent: %q", got)
	}
}

// A deferred tool, once activated, is called as an offered one: write_file
// still needs a person's approval (nobody here: not run), or --yolo.
func TestDeferredStillGated(t *testing.T) {
	for _, yolo := range []bool{false, true} {
		dir := t.TempDir()
		a := &config.Agent{Toolsets: []*config.Toolset{{Type: "filesystem", IgnoreVCS: true, DeferAll: true}}}
		list, deferral, err := Build(&config.Config{Path: "a.yaml"}, a, Deps{WorkingDir: dir, Yolo: yolo})
		if err != nil {
			t.Fatal(err)
		}
		turns := []exec.Message{
			{Role: exec.RoleAssistant, ToolCalls: []exec.ToolCall{{ID: "1", Name: "add_tool", Arguments: json.RawMessage(`{"name":"write_file"}`)}}},
			{Role: exec.RoleAssistant, ToolCalls: []exec.ToolCall{{ID: "2", Name: "write_file", Arguments: json.RawMessage(`{"path":"f.txt","content":"hi"}`)}}},
			{Role: exec.RoleAssistant, Text: "done"},
		}
		r := &exec.Runner{Model: (*playTurns)(&turns), Tools: list, Deferral: deferral}
		st := &exec.State{Messages: []exec.Message{{Role: exec.RoleUser, Text: "go"}}}
		if _, err := r.Run(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		Close(append(list, deferral.Deferred()...))
		res := st.Messages[4]
		_, statErr := os.Stat(filepath.Join(dir, "f.txt"))
		if yolo && (res.IsError || statErr != nil) {
			t.Errorf("yolo: %+v %v", res, statErr)
		}
		if !yolo && (!res.IsError || !strings.Contains(res.Text, "it was not approved") || statErr == nil) {
			t.Errorf("no approver: %+v %v", res, statErr)
		}
	}
}

// playTurns is a model that plays fixed turns.
type playTurns []exec.Message

func (p *playTurns) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	m := (*p)[0]
	*p = (*p)[1:]
	return exec.Turn{Message: m}, nil
}
