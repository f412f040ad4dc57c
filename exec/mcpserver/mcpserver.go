// Package mcpserver offers hitl's questions to an agent hitl does not run,
// as an MCP server (hitl mcp, DESIGN §16): approve (Claude Code's
// permission prompt tool), ask_user_question (seed 004) and user_prompt
// (seed 002). Each call asks through the Asker its desk gives it, so the
// answers file, the approvers, the person's terminal, the policy, events
// and receipts are those of a run. A call's context ends when the client
// cancels it or goes away: the question ends with it, and nothing is
// approved.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/approve"
	"github.com/hitl-dev/hitl/exec/tools/askuserquestion"
	"github.com/hitl-dev/hitl/exec/tools/userprompt"
	"github.com/hitl-dev/hitl/prompt"
)

// The names of the tools.
const (
	Approve         = approve.Name
	AskUserQuestion = "ask_user_question"
	UserPrompt      = "user_prompt"
)

// Desk gives each call the Asker it asks through (run.Desk).
type Desk interface {
	Turn(ctx context.Context) (*prompt.Asker, func(), error)
	Dir() string
}

// Options shape the server.
type Options struct {
	// Version is hitl's version, told to the client.
	Version string
}

// Server is the MCP server.
type Server struct {
	desk   Desk
	opts   Options
	runner *exec.Runner
	calls  atomic.Int64
	// base is Run's context: a call ends when it ends.
	base context.Context
}

// New returns the server of desk's questions.
func New(desk Desk, opts Options) (*Server, error) {
	q := callAsker{}
	s := &Server{desk: desk, opts: opts}
	s.runner = &exec.Runner{Tools: []exec.Tool{
		approve.New(q, func(context.Context) string { return desk.Dir() }),
		askuserquestion.New(AskUserQuestion, q),
		noSecrets{userprompt.New(UserPrompt, q)},
	}}
	if err := s.runner.Prepare(); err != nil {
		return nil, err
	}
	return s, nil
}

// MCP is the go-sdk server offering the tools.
func (s *Server) MCP() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hitl", Title: "hitl: ask a person", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: "Ask a person: approve (a permission prompt tool), ask_user_question (multiple choice), user_prompt (a question with a JSON Schema for the answer). " +
			"Every answer comes from a person or a script the operator wrote; nobody answering is never consent.",
	})
	for _, t := range s.runner.Tools {
		spec := t.Spec()
		// Asking a person changes nothing in the client's world: clients
		// that ask before an MCP tool runs (Codex) let these run unasked.
		srv.AddTool(&mcp.Tool{Name: spec.Name, Description: spec.Description, InputSchema: spec.Parameters,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.handle)
	}
	return srv
}

// Run serves one client over t until it goes away or ctx ends. When ctx
// ends (a signal), the calls asking end too: the SDK waits for them
// before it returns, and does not end them itself.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	s.base = ctx
	return s.MCP().Run(ctx, t)
}

func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	if s.base != nil {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		stop := context.AfterFunc(s.base, func() { cancel(context.Cause(s.base)) })
		defer stop()
	}
	asker, done, err := s.desk.Turn(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: the call ended before it was asked: %w", name, err)
	}
	defer done()
	args := req.Params.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	call := exec.ToolCall{ID: fmt.Sprintf("mcp_%d", s.calls.Add(1)), Name: name, Arguments: args}
	res, err := s.runner.Call(withAsker(ctx, asker), call)
	if err != nil {
		if ctx.Err() != nil {
			// The client cancelled the call or went away: nobody reads a
			// result, and nothing was approved.
			return nil, fmt.Errorf("%s: the call ended: %w", name, context.Cause(ctx))
		}
		res = s.failed(name, err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}, IsError: res.IsError}, nil
}

// failed is the result of a call whose question got no usable answer: a
// deny for approve, an error result saying why for the others.
func (s *Server) failed(name string, err error) exec.Result {
	var stop *prompt.StopError
	why := err.Error()
	switch {
	case errors.As(err, &stop):
		why = "no one answered: " + stop.Reason
	case errors.Is(err, prompt.ErrInterrupted):
		why = "the person interrupted the question (Ctrl-C): nothing was answered"
	default:
		why = "hitl could not ask: " + why
	}
	if name == Approve {
		return approve.Deny(why)
	}
	return exec.Result{IsError: true, Text: why}
}

type askerKey struct{}

func withAsker(ctx context.Context, a *prompt.Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// callAsker asks through the Asker of the call its context carries.
type callAsker struct{}

func (callAsker) Ask(ctx context.Context, q prompt.Question) (prompt.Answer, error) {
	a, ok := ctx.Value(askerKey{}).(*prompt.Asker)
	if !ok {
		return prompt.Answer{}, errors.New("no asker for this call")
	}
	return a.Ask(ctx, q)
}

// noSecrets refuses a user_prompt whose schema asks for a secret: hitl
// mcp has no commands to hand a secret to, and the client's model must
// never see its value (DESIGN §5).
type noSecrets struct{ *userprompt.Tool }

func (t noSecrets) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a struct {
		Schema json.RawMessage `json:"schema"`
	}
	if json.Unmarshal(call.Arguments, &a) == nil {
		if q, err := prompt.FromSchema(a.Schema); err == nil && prompt.HasSecret(q) {
			return exec.Result{IsError: true, Text: "user_prompt was not asked: hitl mcp does not ask for secrets (format: password, writeOnly), " +
				"as the answer would reach the model; give the agent the secret through its own environment"}, nil
		}
	}
	return t.Tool.Call(ctx, call)
}
