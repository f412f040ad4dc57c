package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxResult is the most characters of a tool's result the model receives.
const MaxResult = 100_000

// Tool is one tool of an MCP server.
type Tool struct {
	c        *Client
	spec     exec.ToolSpec
	readOnly bool
}

var _ exec.Acting = (*Tool)(nil)

func newTool(c *Client, t *sdk.Tool) (*Tool, error) {
	params, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		params = json.RawMessage(`{"type":"object"}`)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return &Tool{
		c:        c,
		spec:     exec.ToolSpec{Name: t.Name, Description: desc, Parameters: params},
		readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
	}, nil
}

// Spec is the tool as the server describes it.
func (t *Tool) Spec() exec.ToolSpec { return t.spec }

// Server is the name of the tool's server.
func (t *Tool) Server() string { return t.c.name }

// ReadOnly reports whether the server annotates the tool readOnlyHint.
func (t *Tool) ReadOnly() bool { return t.readOnly }

// Approval: a tool annotated readOnlyHint runs without asking, unless its
// arguments hold a secret placeholder (a person approves everything that can
// send a secret somewhere: such a call is Secret, which no allow rule or
// approval for the session covers). Every other call shows the server, the tool and
// its arguments.
func (t *Tool) Approval(ctx context.Context, call exec.ToolCall) (exec.Approval, bool, error) {
	args, err := arguments(call.Arguments)
	if err != nil {
		return exec.Approval{}, false, err
	}
	// Judged and shown from the decoded arguments, as they are sent:
	// "\u0024HITL_SECRET_1" is a placeholder too.
	secret := prompt.HoldsPlaceholder(args)
	if t.readOnly && !secret {
		// no approval, but rules on mcp:SERVER:TOOL still judge it
		return exec.Approval{Args: args, Server: t.c.name}, false, nil
	}
	pretty := "{}"
	if len(args) > 0 {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if enc.Encode(args) == nil {
			pretty = strings.TrimSuffix(b.String(), "\n")
		}
	}
	return exec.Approval{
		Args:       args,
		Show:       fmt.Sprintf("MCP tool %s of server %s, with the arguments:\n%s", t.spec.Name, t.c.name, pretty),
		Server:     t.c.name,
		SessionKey: "mcp:" + t.c.name + ":" + t.spec.Name,
		// The server receives the secret's value: the gate asks every
		// time, whatever the rules and the approvals for the session.
		Secret: secret,
	}, true, nil
}

// arguments reads a call's arguments: a JSON object (empty when absent).
func arguments(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil || args == nil {
		return nil, fmt.Errorf("invalid arguments: expected a JSON object")
	}
	return args, nil
}

// Call runs the tool on the server. The model's mistakes and the tool's own
// errors are error results; an error return stops the run: the server died
// or failed (*ServerError), or an elicitation was not answered
// (*prompt.StopError) or could not be (a bad answer, an interrupt).
func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	args, err := arguments(call.Arguments)
	if err != nil {
		return exec.Result{IsError: true, Text: err.Error()}, nil
	}
	if t.c.opts.Secrets != nil {
		args = expandAll(args, t.c.opts.Secrets).(map[string]any)
	}
	return t.c.call(ctx, t.spec.Name, call.ID, args)
}

// expandAll substitutes secret placeholders in every string value.
func expandAll(v any, s Secrets) any {
	switch v := v.(type) {
	case string:
		return s.Expand(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = expandAll(x, s)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = expandAll(x, s)
		}
		return out
	}
	return v
}

// callState is a call in flight, which the server's elicitations belong to.
type callState struct {
	tool, callID string
	ctx          context.Context
	cancel       context.CancelCauseFunc
	deadline     *deadline

	mu    sync.Mutex
	err   error // why the call must end with an error (an unanswered elicitation)
	asked int   // elicitations of this call so far
	// keptAgain: the call stopped and its round was kept (keepRound).
	keptAgain bool
}

// MaxQuestionsPerCall bounds the elicitations one tool call may ask: past
// it they are declined without asking, so a server asking in a loop (with
// the call's timeout paused while a person is asked) cannot keep a run, or
// an answers file's repeat entry, going without end.
const MaxQuestionsPerCall = 50

// ask counts one more elicitation; false past MaxQuestionsPerCall.
func (s *callState) ask() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked++
	return s.asked <= MaxQuestionsPerCall
}

// fail ends the call with err.
func (s *callState) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.cancel(err)
}

func (s *callState) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

type callKey struct{}

var errCallTimeout = errors.New("the call timed out")

func (c *Client) call(ctx context.Context, tool, callID string, args map[string]any) (exec.Result, error) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	st := &callState{tool: tool, callID: callID, ctx: cctx, cancel: cancel}
	st.deadline = newDeadline(c.timeout, func() { cancel(errCallTimeout) })
	defer st.deadline.stop()
	c.track(st)
	defer c.untrack(st)

	callCtx := context.WithValue(cctx, callKey{}, st)
	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	res, err := c.callRounds(callCtx, st, params)
	if required := urlsRequired(err); required != nil && c.opts.Asker != nil && st.failure() == nil && cctx.Err() == nil {
		// The server needs a person to open addresses first
		// (URLElicitationRequired): ask, then call again, once; a second
		// refusal goes to the model.
		done, aerr := c.openRequired(cctx, st, required)
		if aerr != nil {
			st.fail(aerr)
		} else if !done {
			return exec.Result{IsError: true, Text: fmt.Sprintf(
				"the MCP server %s needs a person to open an address before %s can run; they did not, so the call was not made.",
				c.name, tool)}, nil
		} else {
			res, err = c.rounds(callCtx, st, params, nil, nil)
		}
	}
	if ferr := st.failure(); ferr != nil {
		return exec.Result{}, ferr
	}
	var gaveUp *abandoned
	if errors.As(err, &gaveUp) {
		return exec.Result{IsError: true, Text: fmt.Sprintf(
			"hitl abandoned the call of the MCP tool %s of server %s: %s.", tool, c.name, gaveUp.why)}, nil
	}
	if err != nil {
		if errors.Is(context.Cause(cctx), errCallTimeout) {
			return exec.Result{IsError: true, Text: fmt.Sprintf(
				"the MCP tool %s of server %s did not finish within its timeout (%s, not counting time spent asking a person); the call was cancelled.",
				tool, c.name, c.timeout)}, nil
		}
		if ctx.Err() != nil {
			return exec.Result{}, context.Cause(ctx)
		}
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && !localCodes[rpc.Code] && !c.dead() {
			// The server refused the call (unknown tool, bad
			// arguments): the model can read that and adjust.
			return exec.Result{IsError: true, Text: c.mask(fmt.Sprintf("the MCP server %s refused the call of %s: %s", c.name, tool, rpc.Message))}, nil
		}
		return exec.Result{}, c.failure("failed during a call of "+tool, c.died(err))
	}
	text := c.mask(resultText(res))
	if s, cut := termtext.Shorten(text, MaxResult); cut > 0 {
		text = s + fmt.Sprintf("\n[%d more characters of the result were left out]", cut)
	}
	return exec.Result{Text: text, IsError: res.IsError}, nil
}

// localCodes are the JSON-RPC errors the SDK makes itself when the
// connection fails; any other is the server's answer.
var localCodes = map[int64]bool{
	-32001: true, // unknown error
	-32003: true, // client is closing
	-32004: true, // server is closing
	-32005: true, // rejected by transport
}

func (c *Client) dead() bool { return c.proc != nil && c.proc.hasExited() }

func (c *Client) mask(s string) string {
	if c.opts.Secrets == nil {
		return s
	}
	return c.opts.Secrets.Mask(s)
}

func (c *Client) track(st *callState) {
	c.mu.Lock()
	c.active = append(c.active, st)
	c.mu.Unlock()
}

func (c *Client) untrack(st *callState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.active {
		if s == st {
			c.active = append(c.active[:i], c.active[i+1:]...)
			return
		}
	}
}

// resultText joins the text of a result; other content is described.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, content := range res.Content {
		switch x := content.(type) {
		case *sdk.TextContent:
			parts = append(parts, x.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", x.MIMEType, len(x.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", x.MIMEType, len(x.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s %s]", x.URI, x.Name))
		case *sdk.EmbeddedResource:
			switch r := x.Resource; {
			case r == nil:
				parts = append(parts, "[an empty resource]")
			case r.Text != "":
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			default:
				parts = append(parts, fmt.Sprintf("[resource %s: %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))
			}
		default:
			parts = append(parts, fmt.Sprintf("[content of type %T]", content))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// deadline cancels a call when its time is up; the clock stands still while
// paused (a person is being asked).
type deadline struct {
	mu        sync.Mutex
	timer     *time.Timer
	remaining time.Duration
	since     time.Time
	paused    int
	stopped   bool
}

func newDeadline(d time.Duration, expire func()) *deadline {
	return &deadline{timer: time.AfterFunc(d, expire), remaining: d, since: time.Now()}
}

func (d *deadline) pause() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.paused == 0 && !d.stopped {
		if d.timer.Stop() {
			d.remaining -= time.Since(d.since)
		} else {
			d.stopped = true // it has fired
		}
	}
	d.paused++
}

func (d *deadline) resume() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.paused--
	if d.paused == 0 && !d.stopped {
		d.since = time.Now()
		d.timer.Reset(max(d.remaining, 0))
	}
}

func (d *deadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	d.timer.Stop()
}
