package config

import (
	"strings"
	"testing"
	"time"
)

func noEnv(string) (string, bool) { return "", false }

func TestParseValid(t *testing.T) {
	src := `version: "7"
models:
  fast:
    provider: openai
    model: gpt-4o-mini
    base_url: ${HOST}/v1
    token_key: MY_KEY
    max_tokens: 4096
    temperature: 0.2
    thinking_budget: low
agents:
  helper:
    model: anthropic/claude-sonnet-4-5
  root:
    model: fast
    description: Deploy assistant
    instruction: Ask first.
    max_iterations: 30
    add_date: true
    commands: {deploy: "Deploy it."}
    toolsets:
      - type: user_prompt
      - type: shell
        env: {CI: "true", TOKEN: "${HOST}"}
        timeout: 120
      - type: ask_user
        name: other
      - type: verdict
        required: true
permissions:
  allow: ["shell:cmd=git status*"]
  deny: ["shell:cmd=rm -rf*"]
metadata: {author: me}
`
	env := func(k string) (string, bool) {
		if k == "HOST" {
			return "http://h", true
		}
		return "", false
	}
	cfg, err := parse("a.yaml", []byte(src), env)
	if err != nil {
		t.Fatal(err)
	}
	root := cfg.Agent("")
	if root.Name != "root" || root.Model.Name != "fast" || root.Model.BaseURL != "http://h/v1" {
		t.Fatalf("root agent: %+v model %+v", root, root.Model)
	}
	if *root.Model.Temperature != 0.2 || *root.Model.MaxTokens != 4096 || root.Model.ThinkingBudget.Effort != "low" {
		t.Errorf("model settings: %+v", root.Model)
	}
	if got := root.Toolsets[1].Env["TOKEN"]; got != "http://h" {
		t.Errorf("env expansion: %q", got)
	}
	if root.Toolsets[1].Timeout != 120*time.Second || root.Toolsets[2].Name != "other" {
		t.Errorf("toolsets: %+v %+v", root.Toolsets[1], root.Toolsets[2])
	}
	if !root.Toolsets[3].Required || root.MaxIterations != 30 || !root.AddDate || root.Commands["deploy"] != "Deploy it." {
		t.Errorf("agent settings: %+v", root)
	}
	helper := cfg.Agent("helper")
	if helper.Model.Provider != "anthropic" || helper.Model.Model != "claude-sonnet-4-5" {
		t.Errorf("inline model: %+v", helper.Model)
	}
	if len(cfg.Permissions.Allow) != 1 || len(cfg.Permissions.Deny) != 1 {
		t.Errorf("permissions: %+v", cfg.Permissions)
	}
	if cfg.SHA256 == "" {
		t.Error("no SHA256")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // each must appear, in this order
	}{
		{"empty", "", []string{"a.yaml:1:1: the file is empty"}},
		{"comment only", "# nothing\n", []string{"a.yaml:1:1: the file is empty"}},
		{"not yaml", "agents: [\n", []string{"a.yaml:1:1: not valid YAML"}},
		{"not yaml with a line", "agents:\n\troot: x\n", []string{"a.yaml:2:1: not valid YAML"}},
		{"duration string", "agents:\n  root:\n    model: openai/x\n    toolsets: [{type: shell, timeout: -3s}]\n", []string{"a.yaml:4:39: expected a timeout"}},
		{"not a mapping", "- a\n- b\n", []string{"a.yaml:1:1: expected a mapping with agents:, got a list"}},
		{"no agents", "version: \"7\"\n", []string{"no agents"}},
		{"unknown top key", "agent:\n  root: {model: openai/x}\n", []string{`a.yaml:1:1: unknown top-level key "agent" (did you mean "agents"?)`, "no agents"}},
		{"unknown model", "agents:\n  root: {model: fast}\n", []string{`a.yaml:2:17: agent root uses unknown model "fast"`}},
		{"missing model", "agents:\n  root: {instruction: hi}\n", []string{"a.yaml:2:3: agent root has no model"}},
		{"unsupported provider", "agents:\n  root: {model: amazon-bedrock/x}\n", []string{`provider "amazon-bedrock" is not supported by hitl`}},
		{"unsupported agent key", "agents:\n  root:\n    model: openai/x\n    code_mode_tools: true\n", []string{`a.yaml:4:5: agent key "code_mode_tools" is not supported by hitl`}},
		{"unknown rag", "agents:\n  root:\n    model: openai/x\n    rag: [a]\n", []string{`a.yaml:4:11: agent root: rag "a" is not a key of the top-level rag:`}},
		{"unknown sub-agent", "agents:\n  root:\n    model: openai/x\n    sub_agents: [reviewr]\n  reviewer: {model: openai/x}\n", []string{`a.yaml:4:18: sub_agents of agent root: no agent reviewr in this file (did you mean "reviewer"?)`}},
		{"catalog sub-agent", "agents:\n  root:\n    model: openai/x\n    sub_agents: [agentcatalog/pirate]\n", []string{`a.yaml:4:18: sub_agents of agent root: agentcatalog/pirate is an agent from a catalog (an OCI reference); agents from catalogs are not supported by hitl`}},
		{"api without api_config", "agents:\n  root:\n    model: openai/x\n    toolsets: [{type: api}]\n", []string{`a.yaml:4:16: an api toolset needs api_config`}},
		{"unknown handoff", "agents:\n  root:\n    model: openai/x\n    handoffs: [zzz]\n", []string{`a.yaml:4:16: handoffs of agent root: no agent zzz in this file (its agents: root)`}},
		{"sub-agent itself", "agents:\n  root:\n    model: openai/x\n    sub_agents: [root]\n", []string{`a.yaml:4:18: sub_agents of agent root names the agent itself`}},
		{"background without sub-agents", "agents:\n  root:\n    model: openai/x\n    toolsets: [{type: background_agents}]\n", []string{`a.yaml:2:3: agent root has a background_agents toolset but no sub_agents`}},
		{"toolset type", "agents:\n  root:\n    model: openai/x\n    toolsets: [{type: shel}]\n", []string{`unknown toolset type "shel" (did you mean "shell"?)`}},
		{"toolset key of other type", "agents:\n  root:\n    model: openai/x\n    toolsets: [{type: verdict, timeout: 3}]\n", []string{`a.yaml:4:32: verdict toolset key "timeout" belongs to fetch, mcp, remote, shell toolsets, not verdict`}},
		{"bad timeout", "agents:\n  root:\n    model: openai/x\n    toolsets: [{type: shell, timeout: soon}]\n", []string{`expected a timeout in seconds (120) or a duration`}},
		{"wrong types", "agents:\n  root:\n    model: openai/x\n    max_iterations: many\n    add_date: yes please\n", []string{"a.yaml:4:21: expected a whole number", "a.yaml:5:15: expected true or false"}},
		{"unset var", "models:\n  m: {provider: openai, model: x, base_url: \"${NOPE}\"}\nagents:\n  root: {model: m}\n", []string{"environment variable NOPE is not set"}},
		{"duplicate tool names", "agents:\n  root:\n    model: openai/x\n    toolsets: [{type: user_prompt}, {type: ask_user, name: user_prompt}]\n", []string{`both give the model a tool named "user_prompt"`}},
		{"script without script", "models:\n  m: {provider: script}\nagents:\n  root: {model: m}\n", []string{"provider script but no script"}},
		{"empty script", "models:\n  m: {provider: script, script: []}\nagents:\n  root: {model: m}\n", []string{"a.yaml:2:6: model m has an empty script: list"}},
		{"script entry empty", "models:\n  m:\n    provider: script\n    script: [{when: x}]\nagents:\n  root: {model: m}\n", []string{"neither text nor tool_calls"}},
		{"script templates", "models:\n  m:\n    provider: script\n    script:\n      - text: \"{{\"\n      - when: \"{{if}}\"\n        tool_calls: [{name: x, arguments: {a: [\"{{.Last\"]}}, {name: y, arguments_json: \"{{end}}\"}]\nagents:\n  root: {model: m}\n",
			[]string{"a.yaml:5:15: not a valid template: unclosed action (line 1 of the template)", "a.yaml:6:15: not a valid template", "a.yaml:7:48: not a valid template", "a.yaml:7:88: not a valid template"}},
		{"duplicate key", "agents:\n  root: {model: openai/x}\nagents:\n  b: {model: openai/x}\n", []string{`"agents" appears twice`}},
		{"thinking budget", "models:\n  m: {provider: openai, model: x, thinking_budget: extreme}\nagents:\n  root: {model: m}\n", []string{`thinking_budget "extreme"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("a.yaml", []byte(tt.src), noEnv)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			rest := msg
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error %q\ndoes not contain %q (in order)", msg, w)
				}
				rest = rest[i+len(w):]
			}
			for _, line := range strings.Split(msg, "\n") {
				if !strings.HasPrefix(line, "a.yaml:") {
					t.Errorf("line without a position: %q", line)
				}
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	tests := []struct{ word, want string }{
		{"instructions", ` (did you mean "instruction"?)`},
		{"toolset", ` (did you mean "toolsets"?)`},
		{"zzzzzz", ""},
	}
	for _, tt := range tests {
		if got := didYouMean(tt.word, agentKeys); got != tt.want {
			t.Errorf("didYouMean(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}
