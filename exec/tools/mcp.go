package tools

import (
	"context"
	"errors"
	"fmt"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hitl-dev/hitl/config"
	hexec "github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/permissions/rule"
	"github.com/hitl-dev/hitl/exec/tools/mcp"
)

// MCPServers are the started MCP servers of a run's agent (DESIGN §10).
// Close them when the run ends, however it ends; Kill them on a hard exit.
type MCPServers struct {
	byToolset map[*config.Toolset]*mcp.Client
	list      []*mcp.Client // in toolset order
	removes   []func()      // files made for the servers (a gateway's config)
}

// dockerEnviron names the variables a docker: server (the docker CLI)
// inherits besides mcp.SafeEnviron: where the daemon is and how to reach it.
var dockerEnviron = []string{"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY"}

// lookPath finds docker (a variable for tests).
var lookPath = func(name string) (string, error) { return sandbox.LookPath(name, "", os.Environ()) }

// StartMCP starts every MCP server of agent a, at once, each within its
// bounded handshake. A server that cannot start is an error naming it with
// the last lines of its stderr (*mcp.ServerError); then none is left
// running. Two toolsets offering one tool name are an error naming both.
func StartMCP(ctx context.Context, cfg *config.Config, a *config.Agent, d Deps) (*MCPServers, error) {
	s := &MCPServers{byToolset: map[*config.Toolset]*mcp.Client{}}
	var sets []*config.Toolset
	for _, ts := range a.Toolsets {
		if ts.Type == "mcp" {
			sets = append(sets, ts)
		}
	}
	if len(sets) == 0 {
		return s, nil
	}
	clients := make([]*mcp.Client, len(sets))
	removes := make([]func(), len(sets))
	errs := make([]error, len(sets))
	var wg sync.WaitGroup
	for i, ts := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clients[i], removes[i], errs[i] = startServer(ctx, ts, d)
		}()
	}
	wg.Wait()
	for i, c := range clients {
		if c != nil {
			s.byToolset[sets[i]] = c
			s.list = append(s.list, c)
		}
		if removes[i] != nil {
			s.removes = append(s.removes, removes[i])
		}
	}
	for i, err := range errs {
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("%s:%d:%d: toolset mcp: %w", cfg.Path, sets[i].Pos.Line, sets[i].Pos.Col, err)
		}
	}
	if err := s.checkNames(cfg, a); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.checkDefer(cfg, a); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// checkDefer checks each mcp toolset's defer: list against the tools its
// server gives the model (after its tools: filter), as tools: is checked.
func (s *MCPServers) checkDefer(cfg *config.Config, a *config.Agent) error {
	for _, ts := range a.Toolsets {
		c := s.byToolset[ts]
		if c == nil || len(ts.DeferTools) == 0 {
			continue
		}
		var names []string
		for _, t := range c.Tools() {
			names = append(names, t.Spec().Name)
		}
		for i, name := range ts.DeferTools {
			if slices.Contains(names, name) {
				continue
			}
			at := ts.Pos
			if i < len(ts.DeferPos) {
				at = ts.DeferPos[i]
			}
			list := strings.Join(names, ", ")
			if list == "" {
				list = "(none)"
			}
			return fmt.Errorf("%s:%d:%d: toolset mcp: defer: the server %s gives the model no tool %q; its tools: %s",
				cfg.Path, at.Line, at.Col, ts.Server, name, list)
		}
	}
	return nil
}

func startServer(ctx context.Context, ts *config.Toolset, d Deps) (c *mcp.Client, remove func(), err error) {
	command, err := serverProgram(ts)
	if err != nil {
		return nil, nil, err
	}
	srv := mcp.Server{
		Name:      ts.Server,
		Command:   command,
		Args:      ts.Args,
		Env:       ts.Env,
		URL:       ts.URL,
		Transport: ts.Transport,
		Headers:   ts.Headers,
		Tools:     ts.Filter,
		Timeout:   ts.Timeout,
	}
	opts := mcp.Options{Sandbox: d.Sandbox}
	if d.Asker != nil {
		opts.Asker = d.Asker
	}
	if d.Secrets != nil {
		opts.Secrets = d.Secrets
	}
	if d.WorkingDir != "" {
		opts.Roots = []string{d.WorkingDir}
		// A stdio server runs where the run's commands do, so its
		// relative paths mean what its roots say; a relative command
		// path still names a file from where hitl was started.
		srv.WorkingDir = d.WorkingDir
		if strings.ContainsRune(srv.Command, filepath.Separator) && !filepath.IsAbs(srv.Command) {
			if abs, err := filepath.Abs(srv.Command); err == nil {
				srv.Command = abs
			}
		}
	}
	opts.Kept, opts.Keep, opts.Notice = d.CallStates, d.OnCallState, d.Notice
	if ts.Docker != "" {
		docker, err := lookPath("docker")
		if err != nil {
			return nil, nil, &mcp.ServerError{Server: ts.Server, What: "cannot start", Err: fmt.Errorf(
				"ref: docker:%s runs the server through Docker's MCP gateway (docker mcp gateway run --servers %s), which needs the docker command; it is not on PATH. Install Docker Desktop (or the docker CLI with the mcp plugin), or give the server a command or a remote url",
				ts.Docker, ts.Docker)}
		}
		srv.Command, srv.Args = docker, []string{"mcp", "gateway", "run", "--servers", ts.Docker}
		if ts.GatewayConfig != nil {
			path, rm, err := gatewayConfigFile(ts)
			if err != nil {
				return nil, nil, &mcp.ServerError{Server: ts.Server, What: "cannot start", Err: err}
			}
			srv.Args = append(srv.Args, "--config", path)
			remove = rm
		}
		opts.Environ = safeEnviron(append(append([]string(nil), mcp.SafeEnviron...), dockerEnviron...))
	}
	c, err = mcp.Start(ctx, srv, opts)
	if err != nil && remove != nil {
		remove()
		remove = nil
	}
	return c, remove, err
}

func safeEnviron(names []string) []string {
	env := []string{}
	for _, k := range names {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// checkNames rejects a tool name offered by two toolsets: two servers, or a
// server and a built-in toolset (whose names the config knows).
func (s *MCPServers) checkNames(cfg *config.Config, a *config.Agent) error {
	owner := map[string]string{}
	describe := func(ts *config.Toolset) string {
		if ts.Type == "mcp" {
			return fmt.Sprintf("mcp server %s (line %d)", ts.Server, ts.Pos.Line)
		}
		return fmt.Sprintf("toolset %s (line %d)", ts.Type, ts.Pos.Line)
	}
	for _, ts := range a.Toolsets {
		if ts.Type == "mcp" {
			continue
		}
		for _, n := range ts.ToolNames() {
			owner[n] = describe(ts)
		}
	}
	if d := config.DeferringToolset(a); d != nil {
		for _, n := range config.DeferToolNames() {
			owner[n] = fmt.Sprintf("the deferred tools (defer: on line %d)", d.Pos.Line)
		}
	}
	for _, ts := range a.Toolsets {
		c := s.byToolset[ts]
		if c == nil {
			continue
		}
		for _, t := range c.Tools() {
			name := t.Spec().Name
			if prev, ok := owner[name]; ok {
				return fmt.Errorf("%s:%d:%d: agent %s: the tool %s is offered by two toolsets, %s and %s; filter one of them with tools: (or rename a built-in one with name:)",
					cfg.Path, ts.Pos.Line, ts.Pos.Col, a.Name, name, prev, describe(ts))
			}
			owner[name] = describe(ts)
		}
	}
	return nil
}

// Close stops every server (its whole process group) and waits for them.
func (s *MCPServers) Close() error {
	if s == nil {
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(s.list))
	for i, c := range s.list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Close()
		}()
	}
	wg.Wait()
	for _, rm := range s.removes {
		rm()
	}
	s.removes = nil
	return errors.Join(errs...)
}

// Kill kills every stdio server's process group at once, without waiting:
// for a hard exit (a second Ctrl-C).
func (s *MCPServers) Kill() {
	if s == nil {
		return
	}
	for _, c := range s.list {
		c.Kill()
	}
	for _, rm := range s.removes {
		rm()
	}
}

// buildMCP gives the tools of an mcp toolset's started server.
func buildMCP(ts *config.Toolset, d Deps) ([]hexec.Tool, error) {
	if d.MCP == nil || d.MCP.byToolset[ts] == nil {
		return nil, fmt.Errorf("the server %s was not started (tools.StartMCP)", ts.Server)
	}
	return d.MCP.byToolset[ts].Tools(), nil
}

// Server is the MCP server of a gated tool ("" for a built-in one), for
// tool.call events.
func (g *gated) Server() string {
	if s, ok := g.Tool.(interface{ Server() string }); ok {
		return s.Server()
	}
	return ""
}

// RuleWarnings lists the deny and ask rules about MCP tools (or OpenAPI
// operations) that match none of the run's tools once the servers have
// listed theirs and the documents are read (DESIGN §7): an
// mcp:SERVER:… rule naming a server of agent a, or a bare rule naming no
// built-in tool of any agent, that no tool of list matches. A typo there
// would silently deny or ask nothing.
func RuleWarnings(cfg *config.Config, a *config.Agent, list []hexec.Tool) []string {
	servers := map[string]bool{}
	openapi := false
	for _, ts := range a.Toolsets {
		switch ts.Type {
		case "mcp":
			servers[strings.ToLower(ts.Server)] = true
		case "openapi":
			openapi = true
		}
	}
	if len(servers) == 0 && !openapi {
		return nil
	}
	offer := "the MCP servers"
	switch {
	case openapi && len(servers) > 0:
		offer = "the MCP servers and the OpenAPI documents"
	case openapi:
		offer = "the OpenAPI documents"
	}
	builtin := map[string]bool{}
	for _, ag := range cfg.Agents {
		for _, ts := range ag.Toolsets {
			if ts.Type != "mcp" && ts.Type != "openapi" {
				for _, n := range ts.ToolNames() {
					builtin[n] = true
				}
			}
		}
	}
	var names []string
	for _, t := range list {
		n := t.Spec().Name
		names = append(names, n)
		if s, ok := t.(interface{ Server() string }); ok && s.Server() != "" {
			names = append(names, "mcp:"+s.Server()+":"+n)
		}
	}
	var out []string
	for _, l := range []struct {
		name  string
		rules []string
	}{{"deny", cfg.Permissions.Deny}, {"ask", cfg.Permissions.Ask}} {
		for _, text := range l.rules {
			r, err := rule.Parse(text)
			if err != nil {
				continue
			}
			if server, ok := mcpServer(r.ToolGlob); ok {
				if !servers[strings.ToLower(server)] {
					continue // another agent's server, or a glob
				}
			} else if matchesAny(r, sortedKeys(builtin)) {
				continue // a built-in tool: config checked it
			}
			if !matchesAny(r, names) {
				out = append(out, fmt.Sprintf("permissions.%s rule %q matches none of the tools %s offer", l.name, text, offer))
			}
		}
	}
	return out
}

func mcpServer(glob string) (string, bool) {
	if len(glob) < 4 || !strings.EqualFold(glob[:4], "mcp:") {
		return "", false
	}
	server, _, _ := strings.Cut(glob[4:], ":")
	return server, true
}

func matchesAny(r rule.Rule, names []string) bool {
	for _, n := range names {
		if r.Tool.MatchString(n) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
