package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// mcpDef is one entry of the top-level mcps: map: a reusable mcp toolset
// that agents' toolsets name with ref:.
type mcpDef struct {
	name string
	ts   *Toolset
}

// mcps reads the top-level mcps: map (cagent's shape: each value is an mcp
// toolset without type, whose source is command, remote or ref: docker:NAME).
func (l *loader) mcps(n *yaml.Node) {
	if !l.want(n, yaml.MappingNode, "a mapping of MCP server names to definitions") {
		return
	}
	l.mcpDefs = map[string]*mcpDef{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := l.mcpDefs[k.Value]; dup {
			l.errorf(k, "mcps: %q appears twice", k.Value)
			continue
		}
		if !l.want(v, yaml.MappingNode, "an MCP server definition (command, remote or ref: docker:NAME)") {
			continue
		}
		// The definition is a toolset of type mcp; type: may be written.
		def := &yaml.Node{Kind: yaml.MappingNode, Line: v.Line, Column: v.Column}
		hasType := false
		for j := 0; j+1 < len(v.Content); j += 2 {
			if v.Content[j].Value == "type" {
				hasType = true
				if v.Content[j+1].Value != "mcp" {
					l.errorf(v.Content[j+1], "mcps: %s: type must be mcp (or left out)", k.Value)
				}
			}
		}
		if !hasType {
			def.Content = append(def.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "type", Line: v.Line, Column: v.Column},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "mcp", Line: v.Line, Column: v.Column})
		}
		def.Content = append(def.Content, v.Content...)
		l.inMCPDef = k.Value
		ts := l.toolset(def)
		l.inMCPDef = ""
		if ts != nil {
			l.mcpDefs[k.Value] = &mcpDef{name: k.Value, ts: ts}
		}
	}
}

func (l *loader) mcpRemote(ts *Toolset, n *yaml.Node) {
	if !l.want(n, yaml.MappingNode, "a mapping with url, transport_type, headers") {
		return
	}
	ts.Transport = "streamable"
	var urlNode *yaml.Node
	l.eachKey(n, "mcp remote key", mcpRemoteKeys, nil, func(key string, k, v *yaml.Node) {
		switch key {
		case "url":
			urlNode = v
			ts.URL = l.expand(v, l.str(v))
		case "transport_type":
			switch t := l.str(v); t {
			case "streamable", "streamable-http":
				ts.Transport = "streamable"
			case "sse":
				ts.Transport = "sse"
			default:
				l.errorf(v, "transport_type %q%s: expected streamable (the default; also streamable-http) or sse", t, didYouMean(t, []string{"streamable", "streamable-http", "sse"}))
			}
		case "headers":
			ts.Headers = l.stringMap(v, true)
		}
	})
	switch {
	case urlNode == nil:
		l.errorf(n, "mcp remote has no url: the server's endpoint (https://host/mcp)")
	case ts.URL != "":
		if u, err := url.Parse(ts.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			l.errorf(urlNode, "mcp remote url %q: expected an http:// or https:// address", ts.URL)
		}
	}
}

// mcpSource checks that an mcp toolset has exactly one of command, remote
// and ref, resolves a ref to mcps: (the toolset's own keys win, env maps
// merge, as in cagent) and names the server.
func (l *loader) mcpSource(ts *Toolset, n, refNode, remoteNode *yaml.Node) {
	count := 0
	for _, set := range []bool{ts.Command != "", remoteNode != nil, refNode != nil} {
		if set {
			count++
		}
	}
	what := "mcp toolset"
	if l.inMCPDef != "" {
		what = "mcps: " + l.inMCPDef
	}
	switch {
	case count == 0:
		l.errorf(n, "%s needs one of command (a stdio server), remote (an HTTP server) or ref (a key of mcps:, or docker:NAME)", what)
		return
	case count > 1:
		l.errorf(n, "%s has more than one of command, remote and ref; give exactly one", what)
		return
	}
	refName := ""
	if refNode != nil {
		ref := l.str(refNode)
		switch {
		case strings.HasPrefix(ref, "docker:"):
			ts.Docker = strings.TrimPrefix(ref, "docker:")
			if ts.Docker == "" {
				l.errorf(refNode, "ref %q names no server; write docker:NAME (a server of Docker's MCP catalog)", ref)
			}
			refName = ts.Docker
		case l.inMCPDef != "":
			l.errorf(refNode, "mcps: %s: ref %q: a definition's ref must be docker:NAME", l.inMCPDef, ref)
			return
		default:
			def, ok := l.mcpDefs[ref]
			if !ok {
				l.errorf(refNode, "ref %q is neither a key of mcps: nor docker:NAME%s", ref, l.mcpKeysHint(ref))
				return
			}
			mergeMCP(ts, def.ts)
			refName = ref
		}
	}
	if ts.Command == "" && len(ts.Args) > 0 {
		l.errorf(n, "%s has args but no command; args are a stdio server's arguments", what)
	}
	if ts.URL != "" && len(ts.Env) > 0 {
		l.errorf(n, "%s has env but is a remote server; env applies to command and docker: servers", what)
	}
	switch {
	case ts.Name != "":
		ts.Server = ts.Name
	case refName != "":
		ts.Server = refName
	case ts.Command != "":
		ts.Server = filepath.Base(ts.Command)
	case ts.URL != "":
		// The host, and its port when the URL gives one (two servers on
		// one host differ by port): http://localhost:8080/ is localhost-8080.
		if u, err := url.Parse(ts.URL); err == nil {
			ts.Server = u.Hostname()
			if p := u.Port(); p != "" {
				ts.Server += "-" + p
			}
		}
	}
	if ts.Server != "" && strings.Contains(ts.Server, ":") {
		l.errorf(n, "%s: server name %q holds a colon, which rules (mcp:SERVER:TOOL) cannot name; set name:", what, ts.Server)
	}
}

// mergeMCP fills what ts leaves empty from the definition def.
func mergeMCP(ts, def *Toolset) {
	ts.Docker = def.Docker
	if ts.Version == "" {
		ts.Version = def.Version
	}
	if ts.GatewayConfig == nil {
		ts.GatewayConfig = def.GatewayConfig
	}
	if ts.Command == "" {
		ts.Command = def.Command
	}
	if ts.URL == "" {
		ts.URL, ts.Transport, ts.Headers = def.URL, def.Transport, def.Headers
	}
	if len(ts.Args) == 0 {
		ts.Args = def.Args
	}
	if ts.Name == "" {
		ts.Name = def.Name
	}
	if ts.Filter == nil {
		ts.Filter = def.Filter
	}
	if ts.Timeout == 0 {
		ts.Timeout = def.Timeout
	}
	if !ts.HasDefer() {
		ts.DeferAll, ts.DeferTools, ts.DeferPos = def.DeferAll, def.DeferTools, def.DeferPos
	}
	if ts.Toon == "" {
		// cagent leaves a definition's toon: unused; hitl uses it.
		ts.Toon = def.Toon
	}
	if len(def.Env) > 0 {
		env := map[string]string{}
		for k, v := range def.Env {
			env[k] = v
		}
		for k, v := range ts.Env {
			env[k] = v
		}
		ts.Env = env
	}
}

func (l *loader) mcpKeysHint(ref string) string {
	keys := make([]string, 0, len(l.mcpDefs))
	for k := range l.mcpDefs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return "; no mcps: are defined"
	}
	return didYouMean(ref, keys) + "; mcps: defines " + strings.Join(keys, ", ")
}

// checkServers rejects two mcp toolsets of one agent with one server name.
func (l *loader) checkServers(a *Agent) {
	seen := map[string]*Toolset{}
	for _, ts := range a.Toolsets {
		if ts.Type != "mcp" || ts.Server == "" {
			continue
		}
		if prev, ok := seen[ts.Server]; ok {
			l.errs = append(l.errs, &Error{File: l.file, Pos: ts.Pos, Msg: fmt.Sprintf(
				"agent %s: two mcp servers are named %s (the other at line %d); set name: on one so rules (mcp:SERVER:TOOL) can tell them apart",
				a.Name, ts.Server, prev.Pos.Line)})
			continue
		}
		seen[ts.Server] = ts
	}
}
