package script

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/sandbox"
)

type secrets struct{}

func (secrets) Mask(s string) string { return strings.ReplaceAll(s, "hunter22", "***") }
func (secrets) Env() []string        { return []string{"HITL_SECRET_1=hunter22"} }

func toolset(t *testing.T, o Options) (*Toolset, string) {
	t.Helper()
	dir := t.TempDir()
	o.BaseDir = dir
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func run(t *testing.T, s *Toolset, name, args string) exec.Result {
	t.Helper()
	for _, tool := range s.Tools() {
		if tool.Spec().Name == name {
			res, err := tool.Call(context.Background(), exec.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)})
			if err != nil {
				t.Fatalf("%s(%s): %v", name, args, err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", name)
	return exec.Result{}
}

func TestResultShapes(t *testing.T) {
	t.Setenv("HITL_TEST_INHERITED", "from hitl")
	t.Setenv("HITL_TEST_KEY", "sk-model-key")
	t.Setenv("who", "inherited")
	s, dir := toolset(t, Options{
		Env:     map[string]string{"GREETING": "hello"},
		Hide:    []string{"HITL_TEST_KEY"},
		Secrets: secrets{},
		Timeout: 300 * time.Millisecond,
		Commands: map[string]Command{
			"greet": {Cmd: `echo "$GREETING ${who}"`, Description: "Greet someone",
				Args: map[string]any{"who": map[string]any{"description": "whom"}}},
			"typed": {Cmd: `printf '%s|%s|%s|%s\n' "$n" "$b" "$o" "$big"`,
				Args: map[string]any{"n": map[string]any{"type": "number"}, "b": map[string]any{"type": "boolean"}, "o": map[string]any{"type": "object"}, "big": map[string]any{"type": "integer"}}},
			"need": {Cmd: `echo "$x"`, Args: map[string]any{"x": map[string]any{"type": "string"}}, Required: []string{"x"}},
			"fail": {Cmd: `echo out; exit 3`},
			"slow": {Cmd: `echo started; sleep 5`},
			"env":  {Cmd: `echo "[$HITL_TEST_INHERITED][$HITL_TEST_KEY][$HITL_SECRET_1][$LOCAL]"`, Env: map[string]string{"LOCAL": "cmd env"}},
			"leak": {Cmd: `echo the password is hunter22`},
			"pwd":  {Cmd: `pwd`, WorkingDir: "sub"},
		},
	})
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	cases := []struct {
		tool, args string
		want       string
		isError    bool
	}{
		{"greet", `{"who":"world"}`, "hello world\n", false},
		{"greet", `{}`, "hello \n", false}, // left out: unset, not inherited
		{"greet", `{"who":null}`, "hello \n", false},
		{"typed", `{"n":1.50,"b":true,"o":{"a": [1, "x"]},"big":12345678901234567890}`, "1.50|true|{\"a\":[1,\"x\"]}|12345678901234567890\n", false},
		{"need", `{"x":"y"}`, "y\n", false},
		{"need", `{}`, "invalid arguments: x is required", true},
		{"need", `{"x":"a","PATH":"/tmp"}`, `invalid arguments: "PATH" is not an argument of need; its arguments are: x`, true},
		{"fail", `{"x":1}`, `invalid arguments: fail takes no arguments (got "x")`, true},
		{"need", `{"x":"a\u0000b"}`, "invalid arguments: x: a value cannot hold a NUL character", true},
		{"need", `[1]`, "", true},
		{"fail", `{}`, "out\n[exit status 3]", true},
		{"slow", `{}`, "started\n[timed out after 300ms: the command and everything it started were stopped]", true},
		{"env", ``, "[from hitl][][][cmd env]\n", false},
		{"leak", `{}`, "the password is ***\n", false},
		{"pwd", `{}`, filepath.Join(dir, "sub") + "\n", false},
	}
	for _, c := range cases {
		res := run(t, s, c.tool, c.args)
		if res.IsError != c.isError || (c.want != "" && res.Text != c.want) {
			t.Errorf("%s(%s):\n got %v %q\nwant %v %q", c.tool, c.args, res.IsError, res.Text, c.isError, c.want)
		}
	}
}

// A hostile argument value is data: whatever shell syntax it holds, it is
// never run, however the author's command uses the variable.
func TestHostileArgumentsNeverRun(t *testing.T) {
	cmds := map[string]Command{}
	for name, cmd := range map[string]string{
		"quoted":   `echo "$v"`,
		"unquoted": `echo $v`,
		"braced":   `echo ${v}`,
		"cagent":   `printf '%s\n' ${v}`,
		"heredoc":  "cat <<EOF\n$v\nEOF",
		"test":     `[ -n "$v" ] && echo set`,
	} {
		cmds[name] = Command{Cmd: cmd, Args: map[string]any{"v": map[string]any{"type": "string"}}}
	}
	s, dir := toolset(t, Options{Commands: cmds})
	values := []string{
		"$(touch pwned1)",
		"`touch pwned2`",
		"; touch pwned3",
		"x && touch pwned4",
		"\"; touch pwned5; echo \"",
		"'; touch pwned6; echo '",
		"a\ntouch pwned7",
		"$(touch${IFS}pwned8)",
		"| touch pwned9",
		"${v:=$(touch pwned10)}",
		"*",
	}
	for name := range cmds {
		for _, v := range values {
			args, _ := json.Marshal(map[string]string{"v": v})
			res := run(t, s, name, string(args))
			if res.IsError {
				t.Errorf("%s(%q): %s", name, v, res.Text)
			}
			if name == "quoted" && res.Text != v+"\n" {
				t.Errorf("quoted %q printed %q", v, res.Text)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("a hostile value ran: %s exists", e.Name())
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		cmds map[string]Command
		env  map[string]string
		want string
	}{
		{"none", nil, nil, "shell: the script toolset needs at least one command"},
		{"empty cmd", map[string]Command{"a": {}}, nil, "shell.a: cmd is empty"},
		{"bad tool name", map[string]Command{"a b": {Cmd: "x"}}, nil, "shell.a b: a tool name has"},
		{"arg not an env name", map[string]Command{"a": {Cmd: "x", Args: map[string]any{"my-arg": nil}}}, nil, "shell.a: args.my-arg: an argument reaches the command as an environment variable"},
		{"reserved PATH", map[string]Command{"a": {Cmd: "x", Args: map[string]any{"PATH": nil}}}, nil, "shell.a: args.PATH: the model may not set PATH"},
		{"reserved LD_PRELOAD", map[string]Command{"a": {Cmd: "x", Args: map[string]any{"LD_PRELOAD": nil}}}, nil, "may not set LD_PRELOAD"},
		{"reserved secret", map[string]Command{"a": {Cmd: "x", Args: map[string]any{"HITL_SECRET_1": nil}}}, nil, "may not set HITL_SECRET_1"},
		{"arg in env", map[string]Command{"a": {Cmd: "x", Args: map[string]any{"v": nil}, Env: map[string]string{"v": "1"}}}, nil, "args.v: also set in env"},
		{"arg in toolset env", map[string]Command{"a": {Cmd: "x", Args: map[string]any{"v": nil}}}, map[string]string{"v": "1"}, "args.v: also set in the toolset's env"},
		{"arg not a schema", map[string]Command{"a": {Cmd: "x", Args: map[string]any{"v": "string"}}}, nil, "args.v: expected a JSON Schema object"},
		{"required unknown", map[string]Command{"a": {Cmd: "x", Args: map[string]any{"v": nil}, Required: []string{"w"}}}, nil, `required: "w" is not one of the args`},
	}
	for _, c := range cases {
		_, err := New(Options{Commands: c.cmds, Env: c.env})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// Specs and instructions are cagent's: tools sorted by name, a property
// without a type is a string, the default description names the command.
func TestSpecsAndInstructions(t *testing.T) {
	s, _ := toolset(t, Options{Commands: map[string]Command{
		"deploy": {Cmd: "./deploy.sh ${env}", Description: "Deploy to an environment",
			Args:     map[string]any{"env": map[string]any{"enum": []any{"staging", "production"}, "description": "where"}},
			Required: []string{"env"}},
		"build": {Cmd: "make"},
	}})
	tools := s.Tools()
	if len(tools) != 2 || tools[0].Spec().Name != "build" || tools[1].Spec().Name != "deploy" {
		t.Fatalf("tools %v", tools)
	}
	if d := tools[0].Spec().Description; d != "Execute shell command: make" {
		t.Errorf("default description %q", d)
	}
	want := `{"additionalProperties":false,"properties":{"env":{"description":"where","enum":["staging","production"],"type":"string"}},"required":["env"],"type":"object"}`
	if got := string(tools[1].Spec().Parameters); got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	if got := string(tools[0].Spec().Parameters); got != `{"additionalProperties":false,"properties":{},"type":"object"}` {
		t.Errorf("no args: %s", got)
	}
	wantInstr := "## Custom Shell Tools\n\n### build\nRuns: `make`\n\n### deploy\nDeploy to an environment\n- `env`: where (required)\n\n"
	if got := s.Instructions(); got != wantInstr {
		t.Errorf("instructions\n got %q\nwant %q", got, wantInstr)
	}
	// Script tools never ask where a sandbox confines them; where none
	// does, every call is an acting call a person approves (DESIGN §12).
	acting := tools[0].(exec.Acting)
	if _, asks, err := acting.Approval(t.Context(), exec.ToolCall{Arguments: []byte(`{}`)}); err != nil || !asks {
		t.Errorf("without a sandbox, a script tool runs unasked (%v)", err)
	}
	sb, err := sandbox.New(sandbox.Auto, t.TempDir())
	if err != nil || !sb.AllowRulesApply() {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	confined, err := New(Options{Commands: map[string]Command{"build": {Cmd: "make"}}, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	if _, asks, _ := confined.Tools()[0].(exec.Acting).Approval(t.Context(), exec.ToolCall{Arguments: []byte(`{}`)}); asks {
		t.Error("a script tool in a sandbox asks for approval")
	}
}

// The run's end stops the command: an error, not a result.
func TestCancel(t *testing.T) {
	s, _ := toolset(t, Options{Commands: map[string]Command{"slow": {Cmd: "sleep 5"}}})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := s.Tools()[0].Call(ctx, exec.ToolCall{ID: "c", Name: "slow", Arguments: json.RawMessage(`{}`)})
	if err == nil || time.Since(start) > 4*time.Second {
		t.Errorf("err %v after %s", err, time.Since(start))
	}
}

// Where a person approves a script call, they see the arguments as the
// command gets them: decoded, not the model's JSON text (whose escapes
// could spell a value the person does not read).
func TestApprovalShowsArgumentsAsSet(t *testing.T) {
	s, err := New(Options{Commands: map[string]Command{"deploy": {Cmd: "./deploy.sh", Args: map[string]any{"target": nil, "note": nil}}}})
	if err != nil {
		t.Fatal(err)
	}
	ap, asks, err := s.Tools()[0].(exec.Acting).Approval(t.Context(), exec.ToolCall{Arguments: []byte(`{"target":"\u0070roduction"}`)})
	if err != nil || !asks {
		t.Fatalf("asks %v, %v", asks, err)
	}
	if want := "Runs: ./deploy.sh\nwith the arguments (as environment variables):\ntarget=production"; ap.Show != want {
		t.Errorf("show %q, want %q", ap.Show, want)
	}
}
