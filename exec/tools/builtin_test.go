package tools

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/exec/tools/skills"
)

func names(list []exec.Tool) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.Spec().Name)
	}
	return out
}

func call(t *testing.T, tool exec.Tool, args string) exec.Result {
	t.Helper()
	res, err := tool.Call(context.Background(), exec.ToolCall{ID: "c", Name: tool.Spec().Name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestEveryTypeBuilds: every toolset type hitl implements (but mcp and
// remote, which need a server) builds the tools its config names; none is
// "not implemented yet", and acting tools are gated.
func TestEveryTypeBuilds(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(spec, []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[{"url":"https://api.example.com"}],"paths":{"/p":{"get":{"operationId":"getP","responses":{"200":{"description":"ok"}}}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sets := map[string]*config.Toolset{
		"openapi":      {Type: "openapi", URL: spec},
		"model_picker": {Type: "model_picker", PickRefs: []string{"openai/a"}},
		"script":       {Type: "script", Scripts: []config.ScriptCommand{{Name: "hello", Cmd: "echo hi"}}},
		"memory":       {Type: "memory", Path: filepath.Join(dir, "m.json")},
		"api":          {Type: "api", API: &config.APIConfig{Name: "puzzle", Endpoint: "https://api.example.com/p", Method: "GET"}},
	}
	for _, typ := range config.ToolsetTypes() {
		if typ == "mcp" || typ == "remote" {
			continue
		}
		t.Run(typ, func(t *testing.T) {
			ts := sets[typ]
			if ts == nil {
				ts = &config.Toolset{Type: typ}
			}
			agent := &config.Agent{Toolsets: []*config.Toolset{ts}}
			deps := Deps{WorkingDir: dir}
			if typ == "background_agents" { // runs other agents: needs some, and a run to start them
				agent.SubAgents = []config.AgentRef{{Name: "helper"}}
				deps.Team = &Team{}
			}
			list, _, err := Build(&config.Config{Path: filepath.Join(dir, "a.yaml")}, agent, deps)
			if err != nil {
				t.Fatal(err)
			}
			defer Close(list)
			want := ts.ToolNames()
			if len(agent.SubAgents) > 0 {
				want = append(want, "transfer_task") // cagent gives it to every agent with sub_agents
			}
			if typ == "openapi" {
				want = []string{"getP"} // the document's operations
			}
			if got := names(list); !slices.Equal(got, want) {
				t.Errorf("tools %v, want %v", got, want)
			}
			for _, tool := range list {
				if _, acts := tool.(exec.Acting); acts {
					t.Errorf("%s acts but is not gated", tool.Spec().Name)
				}
			}
		})
	}
}

// TestFilterAndClose: tools: keeps only the named tools; Close reaches the
// filesystem toolset through the gate, after which its calls fail.
func TestFilterAndClose(t *testing.T) {
	dir := t.TempDir()
	ts := &config.Toolset{Type: "filesystem", Filter: []string{"write_file", "read_file"}}
	list, _, err := Build(&config.Config{Path: "a.yaml"}, &config.Agent{Toolsets: []*config.Toolset{ts}}, Deps{WorkingDir: dir, Yolo: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(list); !slices.Equal(got, []string{"read_file", "write_file"}) {
		t.Fatalf("tools %v", got)
	}
	if res := call(t, list[1], `{"path":"x","content":"1"}`); res.IsError {
		t.Fatalf("write before Close: %s", res.Text)
	}
	if err := Close(list); err != nil {
		t.Fatal(err)
	}
	if res := call(t, list[0], `{"path":"x"}`); !res.IsError || !strings.Contains(res.Text, "closed") {
		t.Errorf("read after Close: %+v", res)
	}
}

// TestResumeRebuildsThinkAndTodo: on a resumed run, think's log and todo's
// list come back from the conversation (Deps.Resumed).
func TestResumeRebuildsThinkAndTodo(t *testing.T) {
	msgs := []exec.Message{
		{Role: exec.RoleUser, Text: "go"},
		{Role: exec.RoleAssistant, ToolCalls: []exec.ToolCall{
			{ID: "1", Name: "think", Arguments: json.RawMessage(`{"thought":"first"}`)},
			{ID: "2", Name: "create_todo", Arguments: json.RawMessage(`{"description":"a"}`)},
		}},
		{Role: exec.RoleTool, ToolCallID: "1", ToolName: "think", Text: "Thoughts:\nfirst"},
		{Role: exec.RoleTool, ToolCallID: "2", ToolName: "create_todo", Text: `{"created":{"id":"todo_1","description":"a","status":"pending"},"all_todos":[{"id":"todo_1","description":"a","status":"pending"}]}`},
	}
	a := &config.Agent{Toolsets: []*config.Toolset{{Type: "think"}, {Type: "todo"}}}
	list, _, err := Build(&config.Config{Path: "a.yaml"}, a, Deps{Resumed: msgs})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]exec.Tool{}
	for _, tool := range list {
		byName[tool.Spec().Name] = tool
	}
	if res := call(t, byName["think"], `{"thought":"second"}`); res.Text != "Thoughts:\nfirst\nsecond" {
		t.Errorf("think after resume: %q", res.Text)
	}
	if res := call(t, byName["list_todos"], `{}`); !strings.Contains(res.Text, `"id":"todo_1","description":"a"`) {
		t.Errorf("list_todos after resume: %s", res.Text)
	}
	if res := call(t, byName["create_todo"], `{"description":"b"}`); !strings.Contains(res.Text, `"created":{"id":"todo_2"`) {
		t.Errorf("ids continue: %s", res.Text)
	}
}

// TestInstructions: each built-in toolset present adds its guidance, in
// toolset order; others add none.
func TestInstructions(t *testing.T) {
	a := &config.Agent{Toolsets: []*config.Toolset{
		{Type: "shell"}, {Type: "todo"}, {Type: "think"},
		{Type: "script", Scripts: []config.ScriptCommand{{Name: "hello", Cmd: "echo hi", Description: "Say hi"}}},
	}}
	got := Instructions(a, Deps{})
	if len(got) != 3 || !strings.HasPrefix(got[0], "## Todo Tools") || !strings.HasPrefix(got[1], "## Think Tool") || !strings.Contains(got[2], "### hello\nSay hi") {
		t.Errorf("Instructions = %q", got)
	}
}

// skills: gives read_skill after the toolsets' tools, and the skills list
// after their instructions, only when the run found a skill; a deny rule
// naming read_skill still applies.
func TestSkills(t *testing.T) {
	dir := t.TempDir()
	sk := filepath.Join(dir, ".agents", "skills", "a")
	if err := os.MkdirAll(sk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sk, "SKILL.md"), []byte("---\nname: a\ndescription: does a\n---\nA.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	found := skills.Discover("", dir)
	cfg := &config.Config{Path: "a.yaml"}
	with := &config.Agent{Name: "root", Skills: true, Toolsets: []*config.Toolset{{Type: "think"}}}
	without := &config.Agent{Name: "root", Toolsets: []*config.Toolset{{Type: "think"}}}
	for _, tt := range []struct {
		name  string
		a     *config.Agent
		set   *skills.Set
		tools []string
		n     int // instructions
	}{
		{"found", with, found, []string{"think", "read_skill"}, 2},
		{"none found", with, &skills.Set{}, []string{"think"}, 1},
		{"not asked for", without, found, []string{"think"}, 1},
	} {
		list, _, err := Build(cfg, tt.a, Deps{Skills: tt.set})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(list); !slices.Equal(got, tt.tools) {
			t.Errorf("%s: tools %v, want %v", tt.name, got, tt.tools)
		}
		ins := Instructions(tt.a, Deps{Skills: tt.set})
		if len(ins) != tt.n || (tt.n == 2 && !strings.Contains(ins[1], "<name>a</name>")) {
			t.Errorf("%s: instructions %q", tt.name, ins)
		}
	}
	list, _, err := Build(cfg, with, Deps{Skills: found})
	if err != nil {
		t.Fatal(err)
	}
	if res := call(t, list[1], `{"name":"a"}`); res.IsError || !strings.HasSuffix(res.Text, "A.\n") {
		t.Errorf("read_skill: %+v", res)
	}
	list, _, err = Build(cfg, with, Deps{Skills: found, Permissions: config.Permissions{Deny: []string{"read_skill"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res := call(t, list[1], `{"name":"a"}`); !res.IsError {
		t.Errorf("denied read_skill ran: %+v", res)
	}
	list, _, err = Build(cfg, with, Deps{Skills: found, Permissions: config.Permissions{Deny: []string{"read_skill:name=b*"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res := call(t, list[1], `{"name":"a"}`); res.IsError {
		t.Errorf("read_skill a denied by a rule for b*: %+v", res)
	}
	if res := call(t, list[1], `{"name":"bee"}`); !res.IsError || !strings.Contains(res.Text, "denied") {
		t.Errorf("read_skill bee: %+v", res)
	}
	// A tool of a toolset named read_skill (an MCP server's, known only
	// at run time) clashes.
	clash := &config.Agent{Name: "root", Skills: true, SkillsPos: config.Pos{Line: 4, Col: 5}, Toolsets: []*config.Toolset{{Type: "user_prompt", Name: "read_skill"}}}
	if _, _, err := Build(cfg, clash, Deps{Skills: found}); err == nil || !strings.Contains(err.Error(), `a.yaml:4:5: agent root: skills: gives the model a tool named "read_skill"`) {
		t.Errorf("clash: %v", err)
	}
}

// readingTool is a tool that reads, says what rules judge of a call, and
// asks only for some calls (as the filesystem reads do).
type readingTool struct{ actingTool }

func (r *readingTool) RuleArgs(exec.ToolCall) map[string]any {
	return map[string]any{"path": "resolved"}
}

// plainTool only reads, and says nothing of its calls.
type plainTool struct{}

func (plainTool) Spec() exec.ToolSpec { return exec.ToolSpec{Name: "think"} }

func (plainTool) Call(context.Context, exec.ToolCall) (exec.Result, error) { return exec.Result{}, nil }

// withCloser keeps what the gate asks of the tool it wraps: whether it acts
// and what rules judge of its calls.
func TestWithCloserKeepsWhatTheGateAsks(t *testing.T) {
	tests := []struct {
		name               string
		tool               exec.Tool
		acting, ruleArgser bool
	}{
		{"acting", &actingTool{name: "write_file"}, true, false},
		{"acting, rules judging its resolved arguments", &readingTool{actingTool{name: "read_file"}}, true, true},
		{"neither", &plainTool{}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := withCloser(tt.tool, io.NopCloser(nil))
			if _, ok := w.(exec.Acting); ok != tt.acting {
				t.Errorf("exec.Acting = %v, want %v", ok, tt.acting)
			}
			if _, ok := w.(ruleArgser); ok != tt.ruleArgser {
				t.Errorf("ruleArgser = %v, want %v", ok, tt.ruleArgser)
			}
			if _, ok := w.(io.Closer); !ok {
				t.Error("not an io.Closer")
			}
		})
	}
}

// The filesystem tools ask before reading what no child reads: the
// credential stores, deny_read, and hitl's state directory (the sessions
// and their key).
func TestFilesystemHidesWhatChildrenCannotRead(t *testing.T) {
	state := t.TempDir()
	sb, err := sandbox.New(sandbox.Off, state)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	cfg := &config.Config{Path: filepath.Join(t.TempDir(), "agent.yaml")}
	o := filesystemOptions(cfg, &config.Toolset{Type: "filesystem"}, Deps{Sandbox: sb, Permissions: config.Permissions{DenyRead: []string{"secrets"}}})
	by := map[string]string{}
	for _, h := range o.Hidden {
		by[h.Path] = h.By
	}
	for path, want := range map[string]string{
		sb.StateDir(): "hitl's state directory",
		filepath.Join(filepath.Dir(cfg.Path), "secrets"): "permissions.deny_read",
	} {
		if by[path] != want {
			t.Errorf("%s hidden by %q, want %q (all: %v)", path, by[path], want, by)
		}
	}
	for _, p := range sandbox.CredentialStores() {
		if by[p] != "the credential stores" {
			t.Errorf("%s hidden by %q", p, by[p])
		}
	}
}
