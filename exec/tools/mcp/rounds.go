package mcp

// Multi-round-trip calls (protocol 2026-07-28, SEP-2322): a server that
// needs input answers a call with an input-required result (its input
// requests and an opaque request state) and the client calls again with the
// responses and the state. hitl does the rounds itself (the SDK's automatic
// middleware is off), so that a run stopped for an answer keeps the state in
// its session and a resumed run continues the call where it stopped instead
// of calling the tool afresh. A server on protocol 2025-11-25 sends
// elicitation/create during the call instead (elicit.go); a run stopped
// there calls the tool again on resume.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of one call's rounds, as the SDK's own middleware has them.
const (
	// maxRounds bounds the calls of one tool call (the first and its
	// retries with answers).
	maxRounds = 10
	// maxBusy bounds the input-required results without input requests (a
	// server shedding load) one call waits out.
	maxBusy = 3
)

// busyWait is the pause before calling again a server that sheds load.
var busyWait = 200 * time.Millisecond

// kept is what a run keeps of a call stopped while its server waited for
// input: enough to continue the call on resume, never a secret value.
type kept struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// RequestState is the server's opaque state, echoed back as is.
	RequestState string `json:"request_state"`
	// Requests are the input requests of the round that stopped.
	Requests sdk.InputRequestMap `json:"input_requests"`
	// PromptIDs are the ids of the questions asked for Requests, so a
	// resumed run asks them again under the same ids.
	PromptIDs map[string]string `json:"prompt_ids,omitempty"`
	// Responses are the answers given before the stop, except to a form
	// with a secret field (asked again on resume).
	Responses map[string]*sdk.ElicitResult `json:"responses,omitempty"`
}

// stateRejected is a server's error to a call continued from a kept state
// (expired, unknown to a restarted server), with the round answered for it:
// the call made afresh does not ask the same questions twice.
type stateRejected struct {
	err      error
	answered *answered
}

// answered is a round's input requests and the responses given to them.
type answered struct {
	requests  sdk.InputRequestMap
	responses sdk.InputResponseMap
}

// reuse is the response given to the request key when the same request was
// answered before in this run (nil: none).
func (a *answered) reuse(key string, ir sdk.InputRequest) *sdk.ElicitResult {
	if a == nil {
		return nil
	}
	r, ok := a.responses[key].(*sdk.ElicitResult)
	if !ok || a.requests[key] == nil {
		return nil
	}
	before, err1 := json.Marshal(a.requests[key])
	now, err2 := json.Marshal(ir)
	if err1 != nil || err2 != nil || string(before) != string(now) {
		return nil
	}
	return r
}

func (e *stateRejected) Error() string { return e.err.Error() }
func (e *stateRejected) Unwrap() error { return e.err }

// abandoned is a call hitl gave up on because of what its server asked
// for: the model is told, the run goes on.
type abandoned struct{ why string }

func (e *abandoned) Error() string { return e.why }

// callRounds makes the call, continuing it from the state a stopped run
// kept when there is one. A server that rejects the kept state gets the
// call afresh, and a person is told.
func (c *Client) callRounds(ctx context.Context, st *callState, params *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	if from := c.keptState(st); from != nil {
		res, err := c.rounds(ctx, st, params, from, nil)
		var rej *stateRejected
		if !errors.As(err, &rej) {
			if !st.keptAgain {
				// The call went on from the state: the session forgets
				// it, so no later call with this id is handed it.
				c.keep(st.callID, nil)
			}
			return res, err
		}
		why := rej.err.Error()
		var rpc *jsonrpc.Error
		if errors.As(rej.err, &rpc) {
			why = rpc.Message
		}
		c.notice(fmt.Sprintf("the MCP server %s did not accept the state of the call of %s kept in the session (%s): calling the tool again from its start",
			c.name, st.tool, termtext.Line(c.mask(why))))
		c.keep(st.callID, nil)
		return c.rounds(ctx, st, params, nil, rej.answered)
	}
	return c.rounds(ctx, st, params, nil, nil)
}

// rounds calls the tool and, while the server answers that it needs input,
// asks for it and calls again with the responses and the request state.
// With from, the first round is the one a stopped run kept: its questions
// are asked (those answered before the stop are not) and the call goes on
// from its state. before, when set, answers the first round's requests it
// answered already. An error from the asker keeps the round's state
// (Options.Keep) and ends the call.
func (c *Client) rounds(ctx context.Context, st *callState, params *sdk.CallToolParams, from *kept, before *answered) (*sdk.CallToolResult, error) {
	p := *params
	busy := 0
	var last *answered
	for round := 1; ; round++ {
		var reqs sdk.InputRequestMap
		var state string
		var given map[string]*sdk.ElicitResult
		var ids map[string]string
		if round == 1 && from != nil {
			reqs, state, given, ids = from.Requests, from.RequestState, from.Responses, from.PromptIDs
		} else {
			res, err := c.session.CallTool(ctx, &p)
			if err != nil && round == 2 && from != nil && serverRefused(err) && ctx.Err() == nil {
				return nil, &stateRejected{err: err, answered: last}
			}
			// Input requests without the input_required type too, as the
			// SDK's own loop has it: a server on 2025-11-25 asks its first
			// round with elicitation/create, and may return the next one.
			if err != nil || (!res.NeedsInput() && res.InputRequests == nil) {
				return res, err
			}
			if round >= maxRounds {
				return nil, &abandoned{fmt.Sprintf("it still asked for input after %d rounds", maxRounds)}
			}
			if len(res.InputRequests) == 0 {
				if busy++; busy >= maxBusy {
					return nil, &abandoned{fmt.Sprintf("it answered %d times in a row that it was busy", maxBusy)}
				}
				select {
				case <-time.After(busyWait * time.Duration(busy)):
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				}
				// The same round again (load shedding carries no state).
				continue
			}
			busy = 0
			reqs, state = res.InputRequests, res.RequestState
		}
		responses, err := c.fulfil(ctx, st, reqs, state, given, ids, before)
		if err != nil {
			return nil, err
		}
		before = nil
		last = &answered{requests: reqs, responses: responses}
		p.InputResponses, p.RequestState = responses, state
	}
}

// serverRefused reports whether err is the server's own JSON-RPC error
// (not one the SDK made because the connection failed).
func serverRefused(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && !localCodes[rpc.Code]
}

// fulfil answers a round's input requests, in the order of their keys:
// elicitations through the asker (given answers are not asked again; a
// question kept with an id is asked under it), roots from the run's roots.
// When the asker fails (nobody answered under --unanswered stop, an
// interrupt), the round is kept for a resume.
func (c *Client) fulfil(ctx context.Context, st *callState, reqs sdk.InputRequestMap, state string,
	given map[string]*sdk.ElicitResult, ids map[string]string, before *answered,
) (sdk.InputResponseMap, error) {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	responses := sdk.InputResponseMap{}
	keep := &kept{Server: c.name, Tool: st.tool, RequestState: state, Requests: reqs,
		PromptIDs: map[string]string{}, Responses: map[string]*sdk.ElicitResult{}}
	for _, k := range keys {
		switch ir := reqs[k].(type) {
		case *sdk.ElicitParams:
			r := given[k]
			if r == nil {
				r = before.reuse(k, ir)
			}
			if r != nil {
				responses[k] = r
				if !secretForm(ir) {
					keep.Responses[k] = r
				}
				continue
			}
			if c.opts.Asker == nil {
				responses[k] = &sdk.ElicitResult{Action: string(prompt.Decline)}
				continue
			}
			id := ids[k]
			if id == "" {
				id = c.newID()
			}
			if id != "" {
				keep.PromptIDs[k] = id
			}
			var err error
			r, err = c.answer(ctx, st, ir, id)
			if err != nil {
				var rpc *jsonrpc.Error
				if !errors.As(err, &rpc) {
					c.keepRound(st, keep)
				}
				return nil, err
			}
			withDefaults(ir, r)
			responses[k] = r
			if !secretForm(ir) {
				keep.Responses[k] = r
			}
		case *sdk.ListRootsParams:
			responses[k] = &sdk.ListRootsResult{Roots: c.roots()}
		case *sdk.CreateMessageParams, *sdk.CreateMessageWithToolsParams:
			return nil, &abandoned{"it asked for sampling (a model's completion), which hitl does not offer"}
		default:
			return nil, &abandoned{fmt.Sprintf("it asked for input of a kind hitl does not know (%T)", ir)}
		}
	}
	return responses, nil
}

// withDefaults adds to an accepted form's content the defaults of the
// fields it leaves out, as the SDK's own elicitation path does (the
// requested schema is flat: a default is a property's).
func withDefaults(p *sdk.ElicitParams, r *sdk.ElicitResult) {
	if r.Action != string(prompt.Accept) || r.Content == nil || p.RequestedSchema == nil {
		return
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return
	}
	var schema struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &schema) != nil {
		return
	}
	for name, prop := range schema.Properties {
		if _, ok := r.Content[name]; ok || len(prop.Default) == 0 {
			continue
		}
		var v any
		if json.Unmarshal(prop.Default, &v) == nil {
			r.Content[name] = v
		}
	}
}

// secretForm reports whether an elicitation asks for a secret (a field
// with format password or writeOnly): its answer is never kept.
func secretForm(p *sdk.ElicitParams) bool {
	if p == nil || p.URL != "" || p.Mode == "url" {
		return false
	}
	f, _, err := formQuestion(p, nil)
	if err != nil {
		return true // not asked anyway; keep nothing of it
	}
	return prompt.HasSecret(f.whole) || prompt.HasSecret(f.asked)
}

// newID takes the id of the next question when the asker can say it
// (prompt.Asker), so the question can be asked again under it on resume.
func (c *Client) newID() string {
	if a, ok := c.opts.Asker.(interface{ NewID() string }); ok {
		return a.NewID()
	}
	return ""
}

// keepRound hands the stopped round to the run to keep, unless it holds a
// secret value (a server echoing one in its state or its questions): then
// nothing is kept and a resumed run calls the tool again.
func (c *Client) keepRound(st *callState, k *kept) {
	data, err := json.Marshal(k)
	if err != nil {
		c.keep(st.callID, nil)
		return
	}
	if len(data) > maxKept {
		c.notice(fmt.Sprintf("the state of the call of %s is larger than %d bytes, so it is not kept in the session: on resume the tool is called again from its start", st.tool, maxKept))
		c.keep(st.callID, nil)
		return
	}
	if c.holdsSecret(data) {
		c.notice(fmt.Sprintf("the state of the call of %s holds a secret value, so it is not kept in the session: on resume the tool is called again from its start", st.tool))
		c.keep(st.callID, nil)
		return
	}
	st.keptAgain = true
	c.keep(st.callID, data)
}

// maxKept bounds the state a call keeps in the session (a server's request
// state is opaque and may be of any size; the session must stay readable).
const maxKept = 1 << 20

// holdsSecret reports whether a secret value of the run is in the JSON
// data: in its text, or in any string of it (where JSON escapes the value).
func (c *Client) holdsSecret(data []byte) bool {
	if c.opts.Secrets == nil {
		return false
	}
	if c.opts.Secrets.Mask(string(data)) != string(data) {
		return true
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return true
	}
	var found func(any) bool
	found = func(v any) bool {
		switch v := v.(type) {
		case string:
			return c.opts.Secrets.Mask(v) != v
		case map[string]any:
			for k, x := range v {
				if found(k) || found(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if found(x) {
					return true
				}
			}
		}
		return false
	}
	return found(v)
}

func (c *Client) keep(callID string, state json.RawMessage) {
	if c.opts.Keep != nil {
		c.opts.Keep(callID, state)
	}
}

// keptState is the state a stopped run kept for the call, if it is this
// server's and this tool's. It is taken: a state continues one call, the
// first of its id (the resumed call), never a later call that comes with
// the same id.
func (c *Client) keptState(st *callState) *kept {
	c.mu.Lock()
	defer c.mu.Unlock()
	raw, ok := c.kept[st.callID]
	if !ok {
		return nil
	}
	var k kept
	if err := json.Unmarshal(raw, &k); err != nil || k.Server != c.name {
		return nil // another server's
	}
	delete(c.kept, st.callID)
	if k.Tool != st.tool || len(k.Requests) == 0 {
		return nil
	}
	return &k
}

func (c *Client) notice(msg string) {
	if c.opts.Notice != nil {
		c.opts.Notice(msg)
	}
}
