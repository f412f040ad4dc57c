package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hitl-dev/hitl/exec/permissions/rule"
	"gopkg.in/yaml.v3"
)

var permissionKeys = []string{"allow", "ask", "deny", "sandbox", "network", "deny_read"}

// SandboxModes are the values of permissions.sandbox (DESIGN §12): where
// the commands of a run are confined (exec/sandbox reads them).
var SandboxModes = []string{"auto", "bwrap", "landlock", "off"}

// permissions reads the rules and checks each against the agents' tools
// (DESIGN §7): a rule that names no tool, or an argument its tool does not
// take, is an error, so a typo in a deny rule never silently denies nothing.
func (l *loader) permissions(n *yaml.Node) {
	if !l.want(n, yaml.MappingNode, "a mapping with allow, ask, deny, sandbox, network, deny_read") {
		return
	}
	p := &l.cfg.Permissions
	u := l.toolUniverse()
	l.eachKey(n, "permissions key", permissionKeys, nil, func(key string, k, v *yaml.Node) {
		if key == "sandbox" {
			if v.Kind != yaml.ScalarNode || !contains(SandboxModes, v.Value) {
				l.errorf(v, "permissions.sandbox: unknown value %q: valid values are %s", v.Value, strings.Join(SandboxModes, ", "))
				return
			}
			p.Sandbox = v.Value
			p.SandboxPos = Pos{Line: v.Line, Col: v.Column}
			return
		}
		if key == "deny_read" {
			p.DenyRead = l.denyRead(v)
			return
		}
		list := l.strings(v)
		for i, text := range list {
			r, err := rule.Parse(text)
			if err != nil {
				l.errorf(v.Content[i], "permissions.%s: %v", key, err)
				continue
			}
			if msg := u.check(r); msg != "" {
				l.errorf(v.Content[i], "permissions.%s: rule %q %s", key, text, msg)
				continue
			}
			if key == "network" && !networkRule(r) {
				l.errorf(v.Content[i], "permissions.network: rule %q: a network rule gives shell commands run unasked the network, so it names them by their command: shell:cmd=GLOB (e.g. shell:cmd=git fetch*)", text)
			}
		}
		switch key {
		case "allow":
			p.Allow = list
		case "ask":
			p.Ask = list
		case "deny":
			p.Deny = list
		case "network":
			p.Network = list
		}
	})
}

// universe is what the agents' toolsets say about the tools of a run.
type universe struct {
	// args holds each built-in, script and remote tool's arguments (nil
	// with known false: the file does not list them).
	args  map[string][]string
	known map[string]bool
	names []string
	// servers are the mcp servers' names; mcp is true when any agent has
	// an mcp toolset (whose tool names the file may not list).
	servers []string
	mcp     bool
	// openapi is true when any agent has an openapi toolset, whose tools
	// the document names when the run starts.
	openapi bool
}

func (l *loader) toolUniverse() *universe {
	u := &universe{args: map[string][]string{}, known: map[string]bool{}}
	for _, a := range l.cfg.Agents {
		if a.Skills && !contains(u.names, "read_skill") {
			// skills: gives read_skill (when the run finds a skill).
			u.names = append(u.names, "read_skill")
			u.known["read_skill"] = true
			u.args["read_skill"] = []string{"name"}
		}
		if DeferringToolset(a) != nil {
			// search_tool{query} and add_tool{name}: rules may judge them.
			for i, name := range DeferToolNames() {
				if _, seen := u.known[name]; !seen {
					u.names = append(u.names, name)
					u.known[name] = true
					u.args[name] = []string{[]string{"query", "name"}[i]}
				}
			}
		}
		for _, ts := range a.Toolsets {
			if ts.Type == "openapi" {
				u.openapi = true
				continue
			}
			if ts.Type == "mcp" {
				u.mcp = true
				if ts.Server != "" && !contains(u.servers, ts.Server) {
					u.servers = append(u.servers, ts.Server)
				}
				continue
			}
			for _, name := range ts.ToolNames() {
				args, ok := ts.ToolArgs(name)
				if _, seen := u.known[name]; !seen {
					u.names = append(u.names, name)
					u.known[name] = ok
				} else if !ok {
					u.known[name] = false
				}
				u.args[name] = append(u.args[name], args...)
			}
		}
	}
	sort.Strings(u.names)
	sort.Strings(u.servers)
	return u
}

// check returns what is wrong with r, or "".
func (u *universe) check(r rule.Rule) string {
	if server, ok := mcpServerPart(r.ToolGlob); ok {
		if len(u.servers) == 0 {
			return "names an mcp server, but no agent has an mcp toolset"
		}
		g, err := rule.Parse(server)
		if err != nil {
			return "names no mcp server"
		}
		for _, s := range u.servers {
			if g.Tool.MatchString(s) {
				return ""
			}
		}
		return fmt.Sprintf("names mcp server %q, which no toolset declares%s; the servers: %s", server, didYouMean(server, u.servers), strings.Join(u.servers, ", "))
	}
	var matched []string
	for _, name := range u.names {
		if r.Tool.MatchString(name) {
			matched = append(matched, name)
		}
	}
	if len(matched) == 0 {
		if u.mcp {
			return "" // a bare MCP tool name: known when the servers answer
		}
		if u.openapi {
			// An operation of an OpenAPI document, read when the run
			// starts: its arguments are the parts of its request.
			for _, a := range r.Args {
				if !httpRuleArg(a.Name) {
					return fmt.Sprintf("gives argument %q%s, but an openapi tool's rules judge %s, header.NAME, cookie.NAME", a.Name, didYouMean(a.Name, HTTPRuleArgs), strings.Join(HTTPRuleArgs, ", "))
				}
			}
			return ""
		}
		what := "names no tool any agent has"
		if r.HasGlob() {
			what = "matches no tool any agent has"
		}
		return fmt.Sprintf("%s%s; the agents' tools: %s", what, didYouMean(r.ToolGlob, u.names), strings.Join(u.names, ", "))
	}
	for _, a := range r.Args {
		if u.takes(matched, a.Name) || (u.mcp && r.HasGlob()) {
			continue
		}
		var takes []string
		for _, name := range matched {
			takes = append(takes, u.args[name]...)
		}
		takes = dedupe(takes)
		who := strings.Join(matched, ", ")
		if len(takes) == 0 {
			return fmt.Sprintf("gives argument %q, but %s takes no arguments", a.Name, who)
		}
		return fmt.Sprintf("gives argument %q%s, but %s takes %s", a.Name, didYouMean(a.Name, takes), who, strings.Join(takes, ", "))
	}
	return ""
}

// takes reports whether one of the tools takes arg (or takes arguments the
// file does not list).
func (u *universe) takes(tools []string, arg string) bool {
	for _, name := range tools {
		if !u.known[name] {
			return true
		}
		for _, a := range u.args[name] {
			if strings.EqualFold(a, arg) {
				return true
			}
		}
	}
	return false
}

// mcpServerPart returns SERVER of a tool pattern mcp:SERVER[:TOOL].
func mcpServerPart(tool string) (string, bool) {
	if len(tool) < 4 || !strings.EqualFold(tool[:4], "mcp:") {
		return "", false
	}
	server, _, _ := strings.Cut(tool[4:], ":")
	return server, true
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// networkRule says whether r can grant the network: it names the shell
// tool (no glob) and its cmd.
func networkRule(r rule.Rule) bool {
	if !strings.EqualFold(r.ToolGlob, "shell") {
		return false
	}
	for _, a := range r.Args {
		if a.Name == "cmd" {
			return true
		}
	}
	return false
}

// denyRead reads permissions.deny_read: paths a command nobody saw cannot
// read (DESIGN §15), absolute, ~/ for the home, or relative to the agent
// file's directory. Anything else (a URL, a glob, a word that is empty)
// is an error where it is written.
func (l *loader) denyRead(n *yaml.Node) []string {
	if !l.want(n, yaml.SequenceNode, "a list of paths") {
		return nil
	}
	var out []string
	for _, item := range n.Content {
		text := l.str(item)
		if why := notAPath(text); why != "" {
			l.errorf(item, "permissions.deny_read: %q is not a path: %s; expected an absolute path, ~/PATH or a path relative to the agent file", text, why)
			continue
		}
		out = append(out, text)
	}
	return out
}

// notAPath says why text cannot name a path to hide, or "".
func notAPath(text string) string {
	switch {
	case strings.TrimSpace(text) == "":
		return "it is empty"
	case strings.ContainsAny(text, "\x00\n\r"):
		return "it holds a control character"
	case strings.Contains(text, "://"):
		return "it is a URL"
	case strings.ContainsAny(text, "*?["):
		return "globs are not supported (name the directory instead)"
	case strings.HasPrefix(text, "~") && text != "~" && !strings.HasPrefix(text, "~/"):
		return "only the own home (~/) can be named"
	}
	return ""
}
