package config

import (
	"slices"
	"strings"
	"testing"
)

// defer: and toon: (cagent's, on any toolset) are read, and their mistakes
// are errors at the place they are written.
func TestDeferAndToon(t *testing.T) {
	agent := func(toolsets string) string {
		return "agents:\n  root:\n    model: openai/x\n    toolsets:\n" + toolsets
	}
	mcps := "mcps:\n  gh:\n    command: gh-mcp\n    defer: [list_issues]\n    toon: list_\n"
	tests := []struct {
		name  string
		src   string
		err   string // "" for none
		check func(t *testing.T, ts []*Toolset)
	}{
		{name: "from an mcps: definition", src: mcps + agent("      - {type: mcp, ref: gh}\n      - {type: mcp, ref: gh, name: other, defer: true, toon: get_}\n"), check: func(t *testing.T, ts []*Toolset) {
			if !ts[0].Defers("list_issues") || ts[0].DeferPos[0] != (Pos{4, 13}) || !toonMatches(ts[0].Toon, "list_issues") {
				t.Errorf("the definition's: %+v", ts[0])
			}
			if !ts[1].DeferAll || toonMatches(ts[1].Toon, "list_issues") || !toonMatches(ts[1].Toon, "get_x") {
				t.Errorf("the toolset's own win: %+v", ts[1])
			}
		}},
		{name: "defer true", src: agent("      - {type: filesystem, defer: true}\n"), check: func(t *testing.T, ts []*Toolset) {
			if !ts[0].DeferAll || !ts[0].Defers("write_file") || !ts[0].HasDefer() {
				t.Errorf("%+v", ts[0])
			}
		}},
		{name: "defer false", src: agent("      - {type: filesystem, defer: false}\n"), check: func(t *testing.T, ts []*Toolset) {
			if ts[0].HasDefer() || ts[0].Defers("read_file") {
				t.Errorf("%+v", ts[0])
			}
		}},
		{name: "defer empty list", src: agent("      - {type: filesystem, defer: []}\n"), check: func(t *testing.T, ts []*Toolset) {
			if ts[0].HasDefer() {
				t.Errorf("%+v", ts[0])
			}
		}},
		{name: "defer list", src: agent("      - type: filesystem\n        defer: [write_file, edit_file]\n"), check: func(t *testing.T, ts []*Toolset) {
			if !ts[0].Defers("edit_file") || ts[0].Defers("read_file") || ts[0].DeferPos[1] != (Pos{6, 29}) {
				t.Errorf("%+v", ts[0])
			}
		}},
		{name: "defer on every type", src: agent("      - {type: shell, defer: true}\n      - {type: user_prompt, name: ask, defer: [ask]}\n      - {type: script, shell: {hi: {cmd: echo}}, defer: [hi]}\n      - {type: remote, url: http://x, tools: [{name: r}], defer: [r]}\n      - {type: mcp, command: x, defer: [anything]}\n")},
		{name: "defer names no tool", src: agent("      - type: filesystem\n        defer: [write_file, writ_file]\n"),
			err: `a.yaml:6:29: defer: filesystem toolset has no tool "writ_file" (did you mean "write_file"?); the tools it gives the model: read_file,`},
		{name: "defer names a filtered-out tool", src: agent("      - {type: filesystem, tools: [read_file], defer: [write_file]}\n"),
			err: `a.yaml:5:56: defer: filesystem toolset has no tool "write_file"; the tools it gives the model: read_file`},
		{name: "defer names the renamed tool", src: agent("      - {type: user_prompt, name: ask, defer: [user_prompt]}\n"),
			err: `defer: user_prompt toolset has no tool "user_prompt"; the tools it gives the model: ask`},
		{name: "defer of a toolset with no tools", src: agent("      - {type: filesystem, tools: [], defer: [read_file]}\n"),
			err: `the tools it gives the model: (none)`},
		{name: "defer a string", src: agent("      - {type: filesystem, defer: all}\n"),
			err: `a.yaml:5:35: defer: expected true (all the toolset's tools), false, or a list of its tools' names, got a string`},
		{name: "defer a mapping", src: agent("      - {type: filesystem, defer: {a: b}}\n"), err: `got a mapping`},
		{name: "defer nothing", src: agent("      - type: filesystem\n        defer:\n"), err: `a.yaml:6:15: defer: expected true`},
		{name: "defer twice", src: agent("      - {type: filesystem, defer: true, defer: false}\n"), err: `filesystem toolset key "defer" appears twice`},
		{name: "a tool named search_tool beside deferred tools", src: agent("      - {type: filesystem, defer: [write_file]}\n      - {type: script, shell: {search_tool: {cmd: echo}}}\n"),
			err: `a.yaml:6:9: agent root: toolset script gives the model a tool named "search_tool", which the agent's deferred tools (defer: on line 5) bring`},
		{name: "add_tool renamed in", src: agent("      - {type: user_prompt, name: add_tool}\n      - {type: shell, defer: true}\n"), err: `tool named "add_tool", which the agent's deferred tools`},
		{name: "search_tool without deferred tools", src: agent("      - {type: script, shell: {search_tool: {cmd: echo}}}\n")},
		{name: "toon", src: agent("      - {type: mcp, command: x, toon: \"list_.*, get_issue$\"}\n      - {type: fetch, toon: fetch}\n"), check: func(t *testing.T, ts []*Toolset) {
			if !toonMatches(ts[0].Toon, "list_issues") || !toonMatches(ts[0].Toon, "get_issue") || toonMatches(ts[0].Toon, "get_issues") || !toonMatches(ts[1].Toon, "fetch") {
				t.Errorf("%v %v", ts[0].Toon, ts[1].Toon)
			}
		}},
		{name: "toon empty", src: agent("      - {type: fetch, toon: \"\"}\n"), check: func(t *testing.T, ts []*Toolset) {
			if toonMatches(ts[0].Toon, "fetch") {
				t.Errorf("%v", ts[0].Toon)
			}
		}},
		{name: "toon not a regexp", src: agent("      - type: mcp\n        command: x\n        toon: \"list_.*, get_(issue\"\n"),
			err: "a.yaml:7:15: toon: \"get_(issue\" is not a valid regular expression: missing closing ): `get_(issue`"},
		{name: "toon too big a repeat", src: agent("      - {type: shell, toon: \"a{2000}\"}\n"), err: `a.yaml:5:29: toon: "a{2000}" is not a valid regular expression: invalid repeat count`},
		{name: "defer a huge odd name", src: agent("      - {type: think, defer: [\"" + strings.Repeat("\\u0000x", 20000) + "\"]}\n"),
			err: `defer: think toolset has no tool "\x00x\x00x`},
		{name: "toon a huge pattern", src: agent("      - {type: think, toon: \"" + strings.Repeat("(a|b)*", 20000) + "\"}\n"), check: func(t *testing.T, ts []*Toolset) {
			if !toonMatches(ts[0].Toon, "think") {
				t.Error("an empty match matches")
			}
		}},
		{name: "toon a list", src: agent("      - {type: shell, toon: [a]}\n"), err: `a.yaml:5:29: expected a string, got a list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parse("a.yaml", []byte(tt.src), noEnv)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v\nwant %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, cfg.Agents[0].Toolsets)
			}
		})
	}
}

// Permission rules may name search_tool and add_tool, with their
// arguments, when an agent has deferred tools.
func TestDeferRules(t *testing.T) {
	src := "agents:\n  root:\n    model: openai/x\n    toolsets:\n      - {type: filesystem, defer: true}\npermissions:\n  ask: [\"add_tool:name=write_*\"]\n  deny: [\"search_tool:query=secret*\"]\n"
	if _, err := parse("a.yaml", []byte(src), noEnv); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(src, "add_tool:name", "add_tool:tool", 1)
	if _, err := parse("a.yaml", []byte(bad), noEnv); err == nil || !strings.Contains(err.Error(), `gives argument "tool", but add_tool takes name`) {
		t.Fatalf("err = %v", err)
	}
	none := strings.Replace(src, "defer: true", "tools: [read_file]", 1)
	if _, err := parse("a.yaml", []byte(none), noEnv); err == nil || !strings.Contains(err.Error(), `rule "add_tool:name=write_*" names no tool`) {
		t.Fatalf("err = %v", err)
	}
	if !slices.Equal(DeferToolNames(), []string{"search_tool", "add_tool"}) {
		t.Fatal(DeferToolNames())
	}
}
