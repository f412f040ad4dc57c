package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicit answers the server's elicitation through the run's asker, as a
// question of the tool call it belongs to. The call's timeout stands still
// while the person is asked. An error from the asker (nobody answered under
// --unanswered stop, a bad answer line, an interrupt) ends the call with that
// error, so the run stops as it would for any other question.
func (c *Client) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	st := c.callOf(ctx)
	if st == nil || c.opts.Asker == nil {
		// Not during a tool call (or with nobody to ask): nothing to
		// tie a question, or a stopped run, to.
		return &sdk.ElicitResult{Action: string(prompt.Decline)}, nil
	}
	return c.answer(ctx, st, req.Params, "")
}

// answer asks the elicitation p of the call st (under the question id id;
// "": the asker's next). The call's timeout stands still while the person
// is asked. An error from the asker ends the call (st.fail).
func (c *Client) answer(ctx context.Context, st *callState, p *sdk.ElicitParams, id string) (*sdk.ElicitResult, error) {
	if !st.ask() {
		return &sdk.ElicitResult{Action: string(prompt.Decline)}, nil
	}
	st.deadline.pause()
	defer st.deadline.resume()
	// The question ends when the call does (the run is cancelled).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(st.ctx, cancel)()

	mode := p.Mode
	if mode == "" {
		mode = "form"
		if p.URL != "" {
			mode = "url"
		}
	}
	var res *sdk.ElicitResult
	var err error
	switch mode {
	case "url":
		res, err = c.askURL(ctx, st, p, id)
	case "form":
		q, single, perr := formQuestion(p, &c.order)
		if perr != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "hitl cannot ask this elicitation: " + perr.Error()}
		}
		res, err = c.askForm(ctx, st, q, single, id)
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unsupported elicitation mode %q", mode)}
	}
	if err != nil {
		st.fail(err)
		return nil, err
	}
	return res, nil
}

// callOf finds the call an elicitation belongs to: the call whose context
// carries it, else the one call in flight (elicitation/create sent during a
// call, protocol 2025-11-25).
func (c *Client) callOf(ctx context.Context) *callState {
	if st, ok := ctx.Value(callKey{}).(*callState); ok {
		return st
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.active) == 1 {
		return c.active[0]
	}
	return nil
}

// form is the question of a form elicitation: the whole form, and what is
// asked (the form, its single field, or a yes/no when it has no fields).
type form struct {
	whole  prompt.Question // Kind form (or text for a schema without properties)
	asked  prompt.Question
	single string // the field asked alone
	empty  bool   // no fields: asked as a yes/no to go on
}

func formQuestion(p *sdk.ElicitParams, order *fieldOrder) (form, string, error) {
	raw, err := order.schema(p.RequestedSchema)
	if err != nil {
		return form{}, "", err
	}
	if p.RequestedSchema == nil {
		raw = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	whole, err := prompt.FromSchema(raw)
	if err != nil {
		return form{}, "", err
	}
	f := form{whole: whole, asked: whole}
	switch {
	case whole.Kind == prompt.KindForm && len(whole.Fields) == 1:
		field := whole.Fields[0]
		f.single = field.Name
		f.asked = field.Question
		f.asked.Title = field.Question.Message
	case whole.Kind != prompt.KindForm:
		f.empty = true
		f.asked = prompt.Question{Kind: prompt.KindConfirm, Consent: prompt.ConsentConfirm}
	}
	f.asked.Message = p.Message
	return f, f.single, nil
}

func (c *Client) askForm(ctx context.Context, st *callState, f form, single, id string) (*sdk.ElicitResult, error) {
	q := f.asked
	q.Tool, q.CallID, q.Server, q.ID = st.tool, st.callID, c.name, id
	if q.Title == "" {
		q.Title = fmt.Sprintf("%s (MCP server %s) asks", st.tool, c.name)
	}
	ans, err := c.opts.Asker.Ask(ctx, q)
	if err != nil {
		return nil, err
	}
	switch ans.Action {
	case prompt.Decline, prompt.Cancel:
		return &sdk.ElicitResult{Action: string(ans.Action)}, nil
	case prompt.Accept:
	default:
		return nil, fmt.Errorf("elicitation of %s: unknown answer action %q", st.tool, ans.Action)
	}
	if len(ans.Content) == 0 && ans.Text != "" {
		// The asker's answers are canonical; free text is a string.
		ans.Content, _ = json.Marshal(ans.Text)
	}
	if f.empty {
		var yes bool
		_ = json.Unmarshal(ans.Content, &yes)
		if !yes {
			return &sdk.ElicitResult{Action: string(prompt.Decline)}, nil
		}
		return &sdk.ElicitResult{Action: string(prompt.Accept), Content: map[string]any{}}, nil
	}

	// The server is not the model: secret fields reach it as their values.
	var obj map[string]json.RawMessage
	if single != "" {
		obj = map[string]json.RawMessage{single: ans.Content}
	} else if err := json.Unmarshal(ans.Content, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the answer to the elicitation of %s is not an object of the form's fields", st.tool)
	}
	for _, field := range f.whole.Fields {
		v, ok := obj[field.Name]
		if !ok || !field.Question.Secret || c.opts.Secrets == nil {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			obj[field.Name], _ = json.Marshal(c.opts.Secrets.Expand(s))
		}
	}
	content, _ := json.Marshal(obj)
	// The whole answer against the requested schema, whatever front end
	// gave it: nothing that breaks the schema reaches the server.
	if _, err := prompt.Check(f.whole, prompt.Answer{Action: prompt.Accept, Content: content}); err != nil {
		return nil, fmt.Errorf("the answer to the elicitation of %s does not fit the requested schema: %w", st.tool, err)
	}
	var out map[string]any
	if err := json.Unmarshal(content, &out); err != nil {
		return nil, err
	}
	return &sdk.ElicitResult{Action: string(prompt.Accept), Content: out}, nil
}

// askURL asks a person to open an address themselves: hitl never opens it.
func (c *Client) askURL(ctx context.Context, st *callState, p *sdk.ElicitParams, id string) (*sdk.ElicitResult, error) {
	msg := ""
	if p.Message != "" {
		msg = p.Message + "\n\n"
	}
	msg += fmt.Sprintf("The MCP server %s asks you to open this address in your browser (hitl does not open it):\n\n  %s\n\n"+
		"Answer yes once you have opened it and are done there, no to refuse.", c.name, termtext.Line(p.URL))
	q := prompt.Question{
		Kind: prompt.KindConfirm, Consent: prompt.ConsentConfirm, AcceptAlone: true,
		Title:   fmt.Sprintf("%s (MCP server %s) asks you to open a web page", st.tool, c.name),
		Message: msg,
		Tool:    st.tool, CallID: st.callID, Server: c.name, ID: id,
	}
	ans, err := c.opts.Asker.Ask(ctx, q)
	if err != nil {
		return nil, err
	}
	switch ans.Action {
	case prompt.Decline, prompt.Cancel:
		return &sdk.ElicitResult{Action: string(ans.Action)}, nil
	case prompt.Accept:
	default:
		return nil, fmt.Errorf("elicitation of %s: unknown answer action %q", st.tool, ans.Action)
	}
	// {"action":"accept"} alone, or true: opened and done.
	yes := len(ans.Content) == 0
	if !yes {
		if err := json.Unmarshal(ans.Content, &yes); err != nil {
			return nil, fmt.Errorf("the answer to the elicitation of %s: expected true or false", st.tool)
		}
	}
	if !yes {
		return &sdk.ElicitResult{Action: string(prompt.Decline)}, nil
	}
	return &sdk.ElicitResult{Action: string(prompt.Accept)}, nil
}

// maxRequired bounds the addresses one URLElicitationRequired error may ask
// a person to open; a longer list is the server's refusal, for the model.
const maxRequired = 4

// urlsRequired reads a URLElicitationRequired error (-32042, spec
// 2025-11-25): the URL elicitations a server needs done before it can run
// a call. nil when err is not one, or not a well-formed one.
func urlsRequired(err error) []*sdk.ElicitParams {
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != sdk.CodeURLElicitationRequired || len(rpc.Data) == 0 {
		return nil
	}
	var data struct {
		Elicitations []*sdk.ElicitParams `json:"elicitations"`
	}
	if json.Unmarshal(rpc.Data, &data) != nil || len(data.Elicitations) == 0 || len(data.Elicitations) > maxRequired {
		return nil
	}
	for _, p := range data.Elicitations {
		if p == nil || p.Mode != "url" || p.URL == "" {
			return nil
		}
	}
	return data.Elicitations
}

// openRequired asks a person to open each address a URLElicitationRequired
// error names, as URL elicitations of the call; true when every one was
// opened and done. The call's timeout stands still meanwhile.
func (c *Client) openRequired(ctx context.Context, st *callState, required []*sdk.ElicitParams) (bool, error) {
	st.deadline.pause()
	defer st.deadline.resume()
	for _, p := range required {
		res, err := c.askURL(ctx, st, p, "")
		if err != nil {
			return false, err
		}
		if res.Action != string(prompt.Accept) {
			return false, nil
		}
	}
	return true, nil
}
