package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// parseOK parses src (an agent file) and fails the test on any error.
func parseOK(t *testing.T, src string, vars map[string]string) *Config {
	t.Helper()
	cfg, err := parse("a.yaml", []byte(src), env(vars))
	if err != nil {
		t.Fatalf("Parse:\n%v", err)
	}
	return cfg
}

func TestMCPToolsets(t *testing.T) {
	src := `mcps:
  files:
    command: npx
    args: ["-y", "server-filesystem", "."]
    env: {A: "1", B: "${TOKEN}"}
    tools: [read_file]
  gh:
    ref: docker:github
agents:
  root:
    model: openai/x
    toolsets:
      - type: mcp
        ref: files
        env: {B: mine}
        timeout: 90s
      - type: mcp
        name: tracker
        command: ./bin/tracker-mcp
        args: [--stdio]
        timeout: 120
      - type: mcp
        remote:
          url: https://mcp.example.com/mcp
          transport_type: sse
          headers: {Authorization: "Bearer ${TOKEN}"}
      - type: mcp
        remote: {url: "http://localhost:8080/"}
      - type: mcp
        command: /usr/local/bin/db-mcp
      - type: mcp
        ref: gh
      - type: mcp
        ref: docker:context7
        tools: [resolve]
`
	cfg := parseOK(t, src, map[string]string{"TOKEN": "t0k"})
	ts := cfg.Agent("").Toolsets
	want := []struct {
		server, command, url, transport, docker string
		args, filter                            []string
		env                                     map[string]string
		timeout                                 time.Duration
	}{
		{server: "files", command: "npx", args: []string{"-y", "server-filesystem", "."}, filter: []string{"read_file"}, env: map[string]string{"A": "1", "B": "mine"}, timeout: 90 * time.Second},
		{server: "tracker", command: "./bin/tracker-mcp", args: []string{"--stdio"}, timeout: 120 * time.Second},
		{server: "mcp.example.com", url: "https://mcp.example.com/mcp", transport: "sse"},
		{server: "localhost-8080", url: "http://localhost:8080/", transport: "streamable"},
		{server: "db-mcp", command: "/usr/local/bin/db-mcp"},
		{server: "gh", docker: "github"},
		{server: "context7", docker: "context7", filter: []string{"resolve"}},
	}
	if len(ts) != len(want) {
		t.Fatalf("%d toolsets, want %d", len(ts), len(want))
	}
	for i, w := range want {
		g := ts[i]
		if g.Server != w.server || g.Command != w.command || g.URL != w.url || g.Transport != w.transport || g.Docker != w.docker ||
			!reflect.DeepEqual(g.Args, w.args) || !reflect.DeepEqual(g.Filter, w.filter) || g.Timeout != w.timeout ||
			(w.env != nil && !reflect.DeepEqual(g.Env, w.env)) {
			t.Errorf("toolset %d = %+v\nwant %+v", i, g, w)
		}
	}
	if got := ts[2].Headers["Authorization"]; got != "Bearer t0k" {
		t.Errorf("headers not expanded: %q", got)
	}
	if got := ts[0].ToolNames(); !reflect.DeepEqual(got, []string{"read_file"}) {
		t.Errorf("mcp ToolNames = %v, want its filter", got)
	}
}

func TestBuiltinToolsets(t *testing.T) {
	src := `agents:
  root:
    model: openai/x
    toolsets:
      - type: filesystem
      - type: think
      - type: todo
        shared: true
      - type: memory
        path: ${HOME}/mem.db
      - type: fetch
        timeout: 30
      - type: script
        env: {LANG: C}
        shell:
          greet:
            cmd: echo "hello $name"
            description: Greet someone
            args:
              name: {type: string, description: who}
          uptime:
            cmd: uptime
  other:
    model: openai/x
    toolsets:
      - type: filesystem
        ignore_vcs: false
        tools: [read_file, write_file]
        allowed_directories: [/srv/docs, "${HOME}/notes"]
        post_edit:
          - path: "*.go"
            cmd: gofmt -w $path
`
	cfg := parseOK(t, src, map[string]string{"HOME": "/home/u"})
	root := cfg.Agent("root").Toolsets
	fs := root[0]
	if !fs.IgnoreVCS || len(fs.ToolNames()) != 9 {
		t.Errorf("filesystem defaults: ignore_vcs %v, tools %v", fs.IgnoreVCS, fs.ToolNames())
	}
	if got := root[1].ToolNames(); !reflect.DeepEqual(got, []string{"think"}) {
		t.Errorf("think tools %v", got)
	}
	if got := root[2].ToolNames(); !root[2].Shared || !reflect.DeepEqual(got, []string{"create_todo", "create_todos", "update_todos", "list_todos"}) {
		t.Errorf("todo: shared %v tools %v", root[2].Shared, got)
	}
	if root[3].Path != "/home/u/mem.db" || len(root[3].ToolNames()) != 5 {
		t.Errorf("memory: %q %v", root[3].Path, root[3].ToolNames())
	}
	if root[4].Timeout != 30*time.Second || root[4].ToolNames()[0] != "fetch" {
		t.Errorf("fetch: %+v", root[4])
	}
	sc := root[5]
	if got := sc.ToolNames(); !reflect.DeepEqual(got, []string{"greet", "uptime"}) || sc.Env["LANG"] != "C" {
		t.Errorf("script tools %v env %v", got, sc.Env)
	}
	g := sc.Scripts[0]
	if g.Cmd != `echo "hello $name"` || g.Description != "Greet someone" || !reflect.DeepEqual(g.Required, []string{"name"}) ||
		!strings.Contains(string(g.Args), `"name":{`) {
		t.Errorf("script command: %+v (args %s)", g, g.Args)
	}
	if args, ok := sc.ToolArgs("greet"); !ok || !reflect.DeepEqual(args, []string{"name"}) {
		t.Errorf("greet args %v %v", args, ok)
	}
	o := cfg.Agent("other").Toolsets[0]
	if o.IgnoreVCS || !reflect.DeepEqual(o.ToolNames(), []string{"read_file", "write_file"}) ||
		!reflect.DeepEqual(o.AllowedDirs, []string{"/srv/docs", "/home/u/notes"}) ||
		!reflect.DeepEqual(o.PostEdit, []PostEdit{{Path: "*.go", Cmd: "gofmt -w $path"}}) {
		t.Errorf("filesystem: %+v", o)
	}
	if args, _ := fs.ToolArgs("search_files_content"); !reflect.DeepEqual(args, []string{"path", "query", "is_regex", "excludePatterns"}) {
		t.Errorf("search_files_content args %v", args)
	}
}

func TestCommands(t *testing.T) {
	src := `agents:
  a:
    model: openai/x
    commands:
      df: "check disk space on ${HOST}"
      fix:
        description: Fix lint
        instruction: "Fix the lint in ${env.PROJECT}: ${args[0]}"
      only-desc: {description: Say hi}
  b:
    model: openai/x
    commands:
      - ls: list files
      - review: "Review $1 then $2"
`
	cfg := parseOK(t, src, map[string]string{"HOST": "web1", "PROJECT": "hitl"})
	a := cfg.Agent("a")
	if a.Commands["df"] != "check disk space on web1" || a.Commands["fix"] != "Fix the lint in hitl: ${args[0]}" || a.Commands["only-desc"] != "Say hi" {
		t.Errorf("commands: %q", a.Commands)
	}
	if a.CommandInfo[1].Description != "Fix lint" || a.CommandInfo[1].Name != "fix" {
		t.Errorf("command info: %+v", a.CommandInfo)
	}
	b := cfg.Agent("b")
	if b.Commands["ls"] != "list files" || len(b.CommandInfo) != 2 {
		t.Errorf("list form: %q", b.Commands)
	}
	render := []struct{ instruction, rest, want string }{
		{"list files", "", "list files"},
		{"list files", "in /tmp", "list files\n\nin /tmp"},
		{"Review $1 then $2", `a.go "b c.go"`, "Review a.go then b c.go"},
		{"Fix: ${args[0]} (${args[1]})", "x", "Fix: x ()"},
		{"All: ${args}", "a  b", "All: a b"},
		{`Join: ${args.join(", ")}`, "a b", "Join: a, b"},
	}
	for _, r := range render {
		if got := RenderCommand(r.instruction, r.rest); got != r.want {
			t.Errorf("RenderCommand(%q, %q) = %q, want %q", r.instruction, r.rest, got, r.want)
		}
	}
}

func TestModelForms(t *testing.T) {
	src := `version: 2
models:
  none: {provider: anthropic, model: c, thinking_budget: none}
  dyn: {provider: openai, model: o3, thinking_budget: -1}
  off: {provider: anthropic, model: c, thinking_budget: 0}
  eff: {provider: openai, model: o3, thinking_budget: {effort: medium}}
  tok: {provider: anthropic, model: c, thinking_budget: {tokens: 2048}}
  min: {provider: openai, model: o3, thinking_budget: minimal}
  mis: {provider: mistral, model: mistral-large-latest}
  own: {provider: xai, model: grok, token_key: MY_XAI, base_url: "http://proxy/v1"}
  local: {provider: dmr, model: ai/qwen3}
agents:
  root: {model: none}
  inline: {model: nebius/some-model}
`
	cfg := parseOK(t, src, nil)
	m := map[string]*Model{}
	for _, x := range cfg.Models {
		m[x.Name] = x
	}
	budgets := map[string]ThinkingBudget{
		"none": {Disabled: true}, "dyn": {Tokens: -1}, "off": {Disabled: true}, "eff": {Effort: "medium"},
		"tok": {Tokens: 2048}, "min": {Effort: "minimal"},
	}
	for name, want := range budgets {
		if got := *m[name].ThinkingBudget; got != want {
			t.Errorf("%s: thinking budget %+v, want %+v", name, got, want)
		}
	}
	presets := []struct {
		m                       *Model
		api, base, key, provide string
	}{
		{m["mis"], "openai", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", "mistral"},
		{m["own"], "openai", "http://proxy/v1", "MY_XAI", "xai"},
		{m["local"], "openai", "http://127.0.0.1:12434/engines/v1", "", "dmr"},
		{cfg.Agent("inline").Model, "openai", "https://api.studio.nebius.com/v1", "NEBIUS_API_KEY", "nebius"},
		{m["none"], "anthropic", "", "", "anthropic"},
	}
	for _, p := range presets {
		if p.m.API != p.api || p.m.BaseURL != p.base || p.m.TokenKey != p.key || p.m.Provider != p.provide {
			t.Errorf("model %s: %+v", p.m.Name, p.m)
		}
	}
	if cfg.Version != "2" {
		t.Errorf("version %q", cfg.Version)
	}
}

func TestPromptFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "extra.md"), []byte("be brief"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "agent.yaml")
	src := "agents:\n  root:\n    model: openai/x\n    add_prompt_files: [extra.md]\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := load(file, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Agent("").PromptFiles; !reflect.DeepEqual(got, []string{filepath.Join(dir, "extra.md")}) {
		t.Errorf("PromptFiles = %v", got)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("agents:\n  root:\n    model: openai/x\n    add_prompt_files: [extra.md, missing-9f3.md]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A file found nowhere adds nothing, as in cagent; it is kept for
	// hitl validate's note, where it is named.
	cfg, err = load(bad, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Agent("")
	if !reflect.DeepEqual(a.PromptFiles, []string{filepath.Join(dir, "extra.md")}) || len(a.MissingPromptFiles) != 1 ||
		a.MissingPromptFiles[0] != (AgentRef{Name: "missing-9f3.md", Pos: Pos{4, 34}}) {
		t.Errorf("missing prompt file: %v, %v", a.PromptFiles, a.MissingPromptFiles)
	}
}

// The rules' tool patterns and arguments are checked against the agents'
// tools; a value may hold colons.
func TestRulesChecked(t *testing.T) {
	base := "agents:\n  root:\n    model: openai/x\n    toolsets:\n      - type: shell\n      - type: fetch\n      - type: filesystem\n      - type: user_prompt\n        name: ask\n"
	withMCP := base + "      - type: mcp\n        name: gh\n        command: gh-mcp\n"
	ok := []struct{ name, src, rules string }{
		{"colon value", base, `allow: ["fetch:urls=http://127.0.0.1:8080/*"]`},
		{"filesystem arg", base, `allow: ["write_file:path=docs/*"]`},
		{"glob tool", base, `ask: ["*_file", "read_*:path=*"]`},
		{"renamed tool takes its type's args", base, `deny: ["ask:message=*"]`},
		{"case", base, `deny: ["Shell:CMD=rm*"]`},
		{"mcp server", withMCP, `deny: ["mcp:gh:delete_*", "mcp:g*:*"]`},
		{"bare mcp tool", withMCP, `allow: ["create_issue"]`},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			parseOK(t, tt.src+"permissions:\n  "+tt.rules+"\n", nil)
		})
	}
	bad := []struct{ name, src, rules, want string }{
		{"typo in tool", base, `deny: ["shel:cmd=rm*"]`, `a.yaml:11:10: permissions.deny: rule "shel:cmd=rm*" names no tool any agent has (did you mean "shell"?)`},
		{"wrong arg", base, `deny: ["shell:command=rm*"]`, `a.yaml:11:10: permissions.deny: rule "shell:command=rm*" gives argument "command", but shell takes cmd, cwd, timeout`},
		{"arg did you mean", base, `deny: ["fetch:url=x*"]`, `gives argument "url" (did you mean "urls"?), but fetch takes urls, timeout, format`},
		{"glob matches nothing", base, `ask: ["deploy_*"]`, `rule "deploy_*" matches no tool any agent has`},
		{"no such server", withMCP, `deny: ["mcp:github:*"]`, `rule "mcp:github:*" names mcp server "github", which no toolset declares; the servers: gh`},
		{"mcp without mcp", base, `deny: ["mcp:gh:*"]`, `names an mcp server, but no agent has an mcp toolset`},
		{"arg of no-arg tool", base + "      - type: todo\n", `deny: ["list_todos:x=1"]`, `but list_todos takes no arguments`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("a.yaml", []byte(tt.src+"permissions:\n  "+tt.rules+"\n"), noEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v\nwant %q", err, tt.want)
			}
		})
	}
}

func TestCagentFormErrors(t *testing.T) {
	agent := func(toolsets string) string {
		return "agents:\n  root:\n    model: openai/x\n    toolsets:\n" + toolsets
	}
	tests := []struct{ name, src, want string }{
		{"mcp without source", agent("      - type: mcp\n        tools: [x]\n"), "a.yaml:5:9: mcp toolset needs one of command (a stdio server), remote (an HTTP server) or ref"},
		{"mcp two sources", agent("      - type: mcp\n        command: x\n        ref: docker:y\n"), "has more than one of command, remote and ref"},
		{"mcp unknown ref", "mcps:\n  github: {command: gh}\n" + agent("      - type: mcp\n        ref: githb\n"), `a.yaml:8:14: ref "githb" is neither a key of mcps: nor docker:NAME (did you mean "github"?); mcps: defines github`},
		{"mcp def ref not docker", "mcps:\n  a: {ref: b}\n" + agent("      - type: mcp\n        ref: a\n"), `mcps: a: ref "b": a definition's ref must be docker:NAME`},
		{"mcp env unset", agent("      - type: mcp\n        command: x\n        env: {T: \"${NOPE}\"}\n"), "environment variable NOPE is not set"},
		{"mcp transport", agent("      - type: mcp\n        remote: {url: \"https://h/mcp\", transport_type: http}\n"), `transport_type "http": expected streamable (the default; also streamable-http) or sse`},
		{"mcp remote url", agent("      - type: mcp\n        remote: {url: \"ftp://h\"}\n"), `mcp remote url "ftp://h": expected an http:// or https:// address`},
		{"mcp duplicate server", agent("      - type: mcp\n        command: /a/srv\n      - type: mcp\n        command: /b/srv\n"), "a.yaml:7:9: agent root: two mcp servers are named srv (the other at line 5)"},
		{"mcp args without command", agent("      - type: mcp\n        remote: {url: \"https://h/mcp\"}\n        args: [x]\n"), "has args but no command"},
		{"mcp version without command", agent("      - type: mcp\n        ref: docker:x\n        version: a/b\n"), `a.yaml:7:18: version names the package that provides a stdio server's command; this server has no command`},
		{"toolset model unknown", agent("      - type: shell\n        model: fats\n"), `a.yaml:6:16: agent root uses unknown model "fats"`},
		{"toolset model alloy", agent("      - type: shell\n        model: openai/a,openai/b\n"), `a.yaml:6:16: toolset model "openai/a,openai/b" is an alloy model; a toolset's results are read by one model`},
		{"model_picker without models", agent("      - type: model_picker\n"), `a.yaml:5:9: a model_picker toolset needs models:`},
		{"two model_pickers", agent("      - {type: model_picker, models: [openai/a]}\n      - {type: model_picker, models: [openai/b]}\n"), `a.yaml:6:9: agent root has two model_picker toolsets (the other at line 5)`},
		{"mcp config without docker", agent("      - type: mcp\n        command: x\n        config: {a: 1}\n"), `a.yaml:7:17: config is handed to Docker's MCP gateway, for a server of ref: docker:NAME`},
		{"filesystem filter", agent("      - type: filesystem\n        tools: [read_fil]\n"), `filesystem toolset has no tool "read_fil" (did you mean "read_file"?)`},
		{"post_edit", agent("      - type: filesystem\n        post_edit: [{path: x}]\n"), "post_edit entry needs both path"},
		{"key of another type", agent("      - type: filesystem\n        path: x\n"), `filesystem toolset key "path" belongs to memory toolsets, not filesystem`},
		{"script undefined var", agent("      - type: script\n        shell:\n          go: {cmd: \"run $target $HOME\", args: {target: {type: string}}}\n"), "script command go uses $HOME, which is not among its args (target)"},
		{"script required", agent("      - type: script\n        shell:\n          go: {cmd: x, args: {a: {}}, required: [b]}\n"), `script command go requires "b", which is not among its args`},
		{"script empty", agent("      - type: script\n        shell: {}\n"), "shell: is empty"},
		{"command var unset", "agents:\n  root:\n    model: openai/x\n    commands: {a: \"hi ${WHO}\"}\n", "a.yaml:4:19: environment variable WHO is not set (used as ${WHO} in a command)"},
		{"command expression", "agents:\n  root:\n    model: openai/x\n    commands: {a: \"${env.X || 'b'}\"}\n", "this expression is not supported by hitl"},
		{"command bang", "agents:\n  root:\n    model: openai/x\n    commands: {a: \"lint: !`make lint`\"}\n", "!`command` in a command (run a command and insert its output) is not supported by hitl"},
		{"command empty", "agents:\n  root:\n    model: openai/x\n    commands: {a: {}}\n", "command a has neither instruction nor description"},
		{"version", "version: \"9\"\nagents:\n  root: {model: openai/x}\n", `a.yaml:1:10: version "9" is not a config version cagent defines; known versions: 0, 1, 2, 3, 4, 5, 6, 7`},
		{"version number", "version: 8\nagents:\n  root: {model: openai/x}\n", `version "8" is not a config version`},
		{"thinking word", "models:\n  m: {provider: openai, model: x, thinking_budget: huge}\nagents:\n  root: {model: m}\n", `thinking_budget "huge": expected none, a number of tokens (-1: dynamic, 0: off) or one of: minimal, low, medium, high`},
		{"thinking both", "models:\n  m: {provider: openai, model: x, thinking_budget: {effort: low, tokens: 3}}\nagents:\n  root: {model: m}\n", "takes one of effort and tokens, not both"},
		{"thinking below -1", "models:\n  m: {provider: openai, model: x, thinking_budget: -2}\nagents:\n  root: {model: m}\n", "expected a number of at least -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("a.yaml", []byte(tt.src), noEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v\nwant %q", err, tt.want)
			}
		})
	}
}

// Every cagent feature hitl lacks says "not supported by hitl", never
// "unknown".
func TestCagentUnsupported(t *testing.T) {
	agent := func(extra string) string {
		return "agents:\n  root:\n    model: openai/x\n" + extra
	}
	tool := func(ts string) string { return agent("    toolsets:\n      - " + ts + "\n") }
	tests := map[string]string{
		"env top":            "env: {A: b}\n" + agent(""),
		"bedrock":            "models:\n  m: {provider: amazon-bedrock, model: x}\nagents:\n  root: {model: m}\n",
		"azure":              "models:\n  m: {provider: azure, model: x}\nagents:\n  root: {model: m}\n",
		"provider_opts":      "models:\n  m: {provider: openai, model: x, provider_opts: {a: b}}\nagents:\n  root: {model: m}\n",
		"vertex":             "models:\n  m: {provider: google, model: x, provider_opts: {project: p, location: l}}\nagents:\n  root: {model: m}\n",
		"bedrock opts":       "models:\n  m: {provider: openai, model: x, provider_opts: {region: eu}}\nagents:\n  root: {model: m}\n",
		"parallel":           "models:\n  m: {provider: openai, model: x, parallel_tool_calls: true}\nagents:\n  root: {model: m}\n",
		"track_usage":        "models:\n  m: {provider: openai, model: x, track_usage: true}\nagents:\n  root: {model: m}\n",
		"skills remote":      agent("    skills: [local, https://skills.example.com]\n"),
		"code_mode_tools":    agent("    code_mode_tools: true\n"),
		"num_history_items":  agent("    num_history_items: 3\n"),
		"add_description":    agent("    add_description_parameter: true\n"),
		"old think":          agent("    think: true\n"),
		"a2a":                tool("{type: a2a, url: x}"),
		"lsp":                tool("{type: lsp, command: x}"),
		"tasks":              tool("{type: tasks}"),
		"toolset sandbox":    tool("{type: shell, sandbox: {}}"),
		"toolset env_file":   tool("{type: shell, env_file: [x]}"),
		"toolset file_types": tool("{type: filesystem, file_types: [go]}"),
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := parse("a.yaml", []byte(src), noEnv)
			if err == nil || !strings.Contains(err.Error(), "not supported by hitl") || strings.Contains(err.Error(), "unknown") {
				t.Errorf("error %v\nwant \"not supported by hitl\" and no \"unknown\"", err)
			}
		})
	}
}

// skills: is cagent's: true, false, or a list of sources; "local" is the
// only one hitl has (remote sources are refused at their line and column).
func TestSkillsKey(t *testing.T) {
	agent := func(extra string) string {
		return "agents:\n  root:\n    model: openai/x\n" + extra
	}
	ok := []struct {
		name, src string
		want      bool
	}{
		{"true", agent("    skills: true\n"), true},
		{"false", agent("    skills: false\n"), false},
		{"absent", agent(""), false},
		{"local", agent("    skills: [local]\n"), true},
		{"local twice", agent("    skills: [local, local]\n"), true},
		{"empty list", agent("    skills: []\n"), false},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parse("a.yaml", []byte(tt.src), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			a := cfg.Agent("root")
			if a.Skills != tt.want {
				t.Errorf("Skills = %v, want %v", a.Skills, tt.want)
			}
			if tt.want && (a.SkillsPos != Pos{4, 5}) {
				t.Errorf("SkillsPos = %v", a.SkillsPos)
			}
		})
	}
	bad := []struct{ name, src, want string }{
		{"remote", agent("    skills:\n      - local\n      - https://skills.example.com\n"),
			`a.yaml:6:9: skills source "https://skills.example.com": remote skills are not supported by hitl`},
		{"remote http", agent("    skills: [http://x]\n"), `a.yaml:4:14: skills source "http://x": remote skills are not supported by hitl`},
		{"unknown source", agent("    skills: [invalid_source]\n"), `a.yaml:4:14: unknown skills source "invalid_source": expected local`},
		{"not a string", agent("    skills: [3]\n"), `a.yaml:4:14: expected a string, got`},
		{"number", agent("    skills: 1\n"), `a.yaml:4:13: expected true, false or a list of skills sources (local), got`},
		{"string", agent("    skills: local\n"), `a.yaml:4:13: expected true, false or a list of skills sources (local)`},
		{"null", agent("    skills:\n"), `expected true, false or a list of skills sources (local)`},
		{"mapping", agent("    skills: {local: true}\n"), `expected true, false or a list of skills sources (local)`},
		{"twice", agent("    skills: true\n    skills: false\n"), `agent key "skills" appears twice`},
		{"read_skill clash", agent("    skills: true\n    toolsets:\n      - {type: user_prompt, name: read_skill}\n"),
			`a.yaml:6:9: agent root: toolset user_prompt gives the model a tool named "read_skill", as skills: (line 4) does`},
		{"read_skill mcp", agent("    skills: true\n    toolsets:\n      - {type: mcp, command: x, tools: [read_skill]}\n"),
			`gives the model a tool named "read_skill"`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("a.yaml", []byte(tt.src), noEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v\nwant %q", err, tt.want)
			}
		})
	}
	// Rules may name read_skill and its argument.
	if _, err := parse("a.yaml", []byte(agent("    skills: true\npermissions:\n  ask: [\"read_skill:name=deploy*\"]\n")), noEnv); err != nil {
		t.Errorf("a rule naming read_skill: %v", err)
	}
	if _, err := parse("a.yaml", []byte(agent("    skills: true\npermissions:\n  deny: [\"read_skill:path=x\"]\n")), noEnv); err == nil || !strings.Contains(err.Error(), `gives argument "path", but read_skill takes name`) {
		t.Errorf("a rule with a wrong argument: %v", err)
	}
	if _, err := parse("a.yaml", []byte(agent("permissions:\n  deny: [read_skill]\n")), noEnv); err == nil || !strings.Contains(err.Error(), "names no tool any agent has") {
		t.Errorf("read_skill without skills: %v", err)
	}
	// Without skills, a toolset may name a tool read_skill.
	if _, err := parse("a.yaml", []byte(agent("    toolsets:\n      - {type: user_prompt, name: read_skill}\n")), noEnv); err != nil {
		t.Errorf("read_skill without skills: %v", err)
	}
}

// An mcp toolset's tools: filter names tools the server will offer: one
// that another toolset already gives is a clash at load.
func TestMCPFilterClash(t *testing.T) {
	src := "agents:\n  root:\n    model: openai/x\n    toolsets:\n      - type: filesystem\n      - type: mcp\n        command: fs\n        tools: [read_file]\n"
	_, err := parse("a.yaml", []byte(src), noEnv)
	if err == nil || !strings.Contains(err.Error(), `a.yaml:6:9: agent root: toolsets filesystem (line 5) and mcp both give the model a tool named "read_file"`) {
		t.Errorf("error %v", err)
	}
}

// A command's ${...} runs to its matching brace, quotes and nested braces
// included: a tool call with literal arguments is kept as a segment of the
// command; any other expression is named in the error.
func TestCommandExpressions(t *testing.T) {
	src := "agents:\n  root:\n    model: openai/x\n    commands: {a: \"lint: ${shell({cmd: 'echo }', n: [1, true, null], o: {\\\"k\\\": -2.5}})} then ${X} ${go_diagnostics()}\"}\n"
	cfg, err := parse("a.yaml", []byte(src), env(map[string]string{"X": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	segs := cfg.Agents[0].CommandSegments["a"]
	if len(segs) != 5 || segs[0].Text != "lint: " || segs[1].Call.Tool != "shell" || string(segs[1].Call.Args) != `{"cmd":"echo }","n":[1,true,null],"o":{"k":-2.5}}` ||
		segs[2].Text != " then x " || segs[3].Call.Tool != "go_diagnostics" || string(segs[3].Call.Args) != `{}` || segs[4].Text != "" {
		t.Errorf("segments %+v", segs)
	}
	bad := []struct{ expr, want string }{
		{"${args.map(x => x)}", "${args.map(x => x)}: this expression is not supported by hitl"},
		{"${shell({cmd: X})}", "X: only literal values"},
		{"${shell('ls')}", "the argument of shell must be an object"},
		{"${shell({cmd: 'ls'}) + 1}", `unexpected "+ 1" after the call of shell`},
	}
	for _, b := range bad {
		src := "agents:\n  root:\n    model: openai/x\n    commands: {a: \"" + b.expr + "\"}\n"
		_, err := parse("a.yaml", []byte(src), noEnv)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: error %v, want %q", b.expr, err, b.want)
		}
	}
}
