// Package mcptest is a small MCP server built with the official Go SDK, for
// tests of hitl's MCP client: a read-only tool, a destructive one, a form
// elicitation covering every primitive the spec allows, two elicitations in
// one call, a URL elicitation, a
// slow tool, a crash, an echo, a tool that needs a URL opened first, and
// multi-round tools whose request state carries their first phase
// (rounds.go). It runs over stdio (the mcptest-server
// command, built by Build) and over streamable HTTP (HTTP).
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shape the server.
type Options struct {
	// Legacy restricts the server to protocol 2025-11-25, where elicitation
	// is a request the server sends during the call (elicitation/create)
	// rather than an input-required result (2026-07-28).
	Legacy bool
	// Crash ends the server abruptly (stdio: the process exits; HTTP: the
	// listener drops every connection).
	Crash func()
	// CountFile, when set, gets a line each time a multi-round tool
	// (provision, signin) starts a call afresh (its first phase: work done
	// before it asks), so a test can tell a call continued from its
	// request state from one made again. Without it the server counts in
	// memory (which a restarted stdio server forgets).
	CountFile string
	// Forgetful makes the multi-round tools refuse request states another
	// instance of the server gave (as a server that keeps its states in
	// memory, restarted): a stdio server started again, a second HTTP
	// server.
	Forgetful bool
	// DeletedLog, when set, gets a line (the item's id) for each item
	// delete_item deletes: what a test checks was or was not done.
	DeletedLog string
	// Prefix goes before every tool's name: servers standing in for
	// different real ones offer different tools.
	Prefix string
	// Extra are more tools, by name (not prefixed), each answering with
	// its arguments: a stand-in for a real server offers its tools.
	Extra []string
}

func addExtra(s *mcp.Server, names []string) {
	for _, name := range names {
		s.AddTool(&mcp.Tool{Name: name, Description: "Stands in for " + name + ": answers with its arguments.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text(name + " " + string(req.Params.Arguments)), nil
			})
	}
}

func addTool(s *mcp.Server, opts Options, t *mcp.Tool, h mcp.ToolHandler) {
	t.Name = opts.Prefix + t.Name
	s.AddTool(t, h)
}

// ConfigureSchema is the form the configure tool asks for: every primitive
// an elicitation schema may hold.
const ConfigureSchema = `{"type":"object","properties":{
"email":{"type":"string","format":"email","title":"Email","description":"Where reports go"},
"homepage":{"type":"string","format":"uri","title":"Homepage"},
"start":{"type":"string","format":"date","title":"Start date"},
"at":{"type":"string","format":"date-time","title":"Maintenance window"},
"name":{"type":"string","title":"Name","minLength":1,"maxLength":40,"default":"demo"},
"ratio":{"type":"number","title":"Sampling ratio","minimum":0,"maximum":1,"default":0.5},
"replicas":{"type":"integer","title":"Replicas","minimum":1,"maximum":10,"default":3},
"verbose":{"type":"boolean","title":"Verbose logs","default":false},
"region":{"type":"string","title":"Region","enum":["eu","us"],"default":"eu"},
"tier":{"type":"string","title":"Tier","oneOf":[{"const":"free","title":"Free tier"},{"const":"pro","title":"Pro tier"}],"default":"free"},
"features":{"type":"array","title":"Features","items":{"type":"string","enum":["metrics","traces","logs"]},"maxItems":3,"default":["metrics"]}
},"required":["email","replicas"]}`

// ChooseEnvSchema is a form of a single field.
const ChooseEnvSchema = `{"type":"object","properties":{"env":{"type":"string","title":"Environment","enum":["staging","production"]}},"required":["env"]}`

// LoginSchema holds a secret field.
const LoginSchema = `{"type":"object","properties":{"user":{"type":"string","title":"User"},"password":{"type":"string","title":"Password","writeOnly":true}},"required":["user","password"]}`

// NewServer returns the test server.
func NewServer(opts Options) *mcp.Server {
	so := &mcp.ServerOptions{}
	if opts.Legacy {
		so.SupportedProtocolVersions = []string{"2025-11-25"}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1.0.0"}, so)
	yes := true
	obj := func(props string, required ...string) json.RawMessage {
		r, _ := json.Marshal(required)
		if len(required) == 0 {
			r = []byte("[]")
		}
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(r) + `}`)
	}

	addTool(s, opts, &mcp.Tool{
		Name:        "read_status",
		Description: "Read the service status.",
		InputSchema: obj(``),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("status: ok"), nil
	})

	addTool(s, opts, &mcp.Tool{
		Name:        "delete_item",
		Description: "Delete an item for good.",
		InputSchema: obj(`"id":{"type":"string"}`, "id"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ ID string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		if opts.DeletedLog != "" && in.ID != "" {
			if f, err := os.OpenFile(opts.DeletedLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(f, in.ID)
				f.Close()
			}
		}
		if in.ID == "" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such item"}}}, nil
		}
		return text("deleted " + in.ID), nil
	})

	addTool(s, opts, &mcp.Tool{
		Name:        "echo",
		Description: "Return the text given.",
		InputSchema: obj(`"text":{"type":"string"}`, "text"),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Text string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "echo: " + in.Text},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
		}}, nil
	})

	addTool(s, opts, &mcp.Tool{
		Name:        "raw",
		Description: "Return the text given, as it is; an error result when error is true.",
		InputSchema: obj(`"text":{"type":"string"},"error":{"type":"boolean"}`, "text"),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Text  string
			Error bool
		}
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return &mcp.CallToolResult{IsError: in.Error, Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
	})

	addTool(s, opts, &mcp.Tool{
		Name:        "slow",
		Description: "Sleep for ms milliseconds.",
		InputSchema: obj(`"ms":{"type":"integer"}`, "ms"),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ MS int }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
			return text(fmt.Sprintf("slept %d ms", in.MS)), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})

	addTool(s, opts, &mcp.Tool{
		Name:        "crash",
		Description: "Crash the server in the middle of the call.",
		InputSchema: obj(``),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "mcptest: crashing on purpose")
		if opts.Crash != nil {
			opts.Crash()
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})

	elicitTool := func(name, desc string, params func(req *mcp.CallToolRequest) *mcp.ElicitParams) {
		addTool(s, opts, &mcp.Tool{Name: name, Description: desc, InputSchema: obj(`"after_ms":{"type":"integer"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				resp, ok := req.Params.InputResponses["ask"]
				if !ok {
					return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"ask": params(req)}, RequestState: name}, nil
				}
				r, _ := resp.(*mcp.ElicitResult)
				if r == nil {
					return nil, fmt.Errorf("the answer is not an elicitation result")
				}
				// after_ms: work done after the answer, for timeout tests.
				var in struct {
					AfterMS int `json:"after_ms"`
				}
				_ = json.Unmarshal(req.Params.Arguments, &in)
				select {
				case <-time.After(time.Duration(in.AfterMS) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				out, _ := json.Marshal(map[string]any{"action": r.Action, "content": r.Content})
				return text(string(out)), nil
			})
	}
	elicitTool("configure", "Configure the service (asks the user a form).", func(*mcp.CallToolRequest) *mcp.ElicitParams {
		return &mcp.ElicitParams{Mode: "form", Message: "Configure the service", RequestedSchema: json.RawMessage(ConfigureSchema)}
	})
	elicitTool("choose_env", "Deploy to an environment the user chooses.", func(*mcp.CallToolRequest) *mcp.ElicitParams {
		return &mcp.ElicitParams{Mode: "form", Message: "Which environment?", RequestedSchema: json.RawMessage(ChooseEnvSchema)}
	})
	elicitTool("login", "Log in (asks for a password).", func(*mcp.CallToolRequest) *mcp.ElicitParams {
		return &mcp.ElicitParams{Mode: "form", Message: "Log in to the tracker", RequestedSchema: json.RawMessage(LoginSchema)}
	})
	elicitTool("open_link", "Authorize through a web page.", func(*mcp.CallToolRequest) *mcp.ElicitParams {
		return &mcp.ElicitParams{Mode: "url", Message: "Authorize access", URL: "https://auth.example.com/authorize?state=x\x1b[31m", ElicitationID: "el-1"}
	})

	// two_step asks twice in one call: the environment, then a name.
	addTool(s, opts, &mcp.Tool{Name: "two_step", Description: "Deploy after two questions.", InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			answer := func(key, field string) (string, bool) {
				r, _ := req.Params.InputResponses[key].(*mcp.ElicitResult)
				if r == nil {
					return "", false
				}
				if r.Action != "accept" {
					return r.Action, true
				}
				v, _ := r.Content[field].(string)
				return v, true
			}
			state := req.Params.RequestState
			if env, ok := answer("env", "env"); ok {
				state = "env=" + env
			}
			if name, ok := answer("name", "name"); ok && strings.HasPrefix(state, "env=") {
				return text(fmt.Sprintf("deployed %s to %s", name, strings.TrimPrefix(state, "env="))), nil
			}
			if strings.HasPrefix(state, "env=") {
				return &mcp.CallToolResult{RequestState: state, InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
					Mode: "form", Message: "Name of the release?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Release"}},"required":["name"]}`),
				}}}, nil
			}
			return &mcp.CallToolResult{RequestState: "start", InputRequests: mcp.InputRequestMap{"env": &mcp.ElicitParams{
				Mode: "form", Message: "Which environment?", RequestedSchema: json.RawMessage(ChooseEnvSchema),
			}}}, nil
		})

	// authorize_first needs a person to open an address before its first
	// call in a session runs (URLElicitationRequired, -32042).
	var mu sync.Mutex
	authorized := map[*mcp.ServerSession]bool{}
	addTool(s, opts, &mcp.Tool{Name: "authorize_first", Description: "Act once the user has authorized access.", InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			if !authorized[req.Session] {
				authorized[req.Session] = true
				return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{
					Mode: "url", Message: "Authorize the tracker", URL: "https://auth.example.com/first\x1b[2J", ElicitationID: "el-first",
				}})
			}
			return text("authorized and done"), nil
		})
	addRoundTools(s, opts)
	addExtra(s, opts.Extra)
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
