// Package remote gives the model tools served by an HTTP tool server (seed
// 000): hitl POSTs each call to the server, which answers later on a callback
// URL with a tool_result, or first with user_choice messages that hitl asks
// the user through the usual front ends without understanding the decision.
package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// DefaultTimeout is how long a call may stay pending when the toolset sets no
// timeout. Time spent asking a person does not count.
const DefaultTimeout = 10 * time.Minute

// responseTimeout bounds the POST of a selection to a response_url.
const responseTimeout = 30 * time.Second

// Secrets puts secret values into the arguments sent to the tool server and
// keeps them out of the results (prompt.Secrets).
type Secrets interface {
	Expand(text string) string
	Mask(text string) string
}

// Options is what the tools of a remote toolset need from the run.
type Options struct {
	// RunID is the protocol's group_id.
	RunID string
	// Server takes the callbacks; one per run, shared by its remote
	// toolsets.
	Server  *Server
	Asker   prompt.Questioner
	Secrets Secrets // nil: no secrets
	// Progress shows a line to a person (nil: none).
	Progress func(msg string)
	// Client sends invocations and selections (nil: a client that never
	// follows redirects).
	Client *http.Client
}

// Tool is one tool of a remote toolset.
type Tool struct {
	name         string
	spec         exec.ToolSpec
	url          *url.URL
	headers      map[string]string
	timeout      time.Duration
	callbackHost string
	allowHosts   []string
	opts         Options
}

// New returns the tools a remote toolset declares.
func New(ts *config.Toolset, opts Options) ([]*Tool, error) {
	u, err := url.Parse(ts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q: expected an absolute http(s) URL of the tool server's invocation endpoint", ts.URL)
	}
	if opts.Server == nil {
		return nil, errors.New("no callback server")
	}
	if opts.RunID == "" {
		opts.RunID = randomID("run_")
	}
	if opts.Client == nil {
		opts.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	timeout := ts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	host := ts.CallbackHost
	if host == "" {
		host = "127.0.0.1"
	}
	out := make([]*Tool, 0, len(ts.Tools))
	for _, rt := range ts.Tools {
		params := rt.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, &Tool{
			name:         rt.Name,
			spec:         exec.ToolSpec{Name: rt.Name, Description: rt.Description, Parameters: params},
			url:          u,
			headers:      ts.Headers,
			timeout:      timeout,
			callbackHost: host,
			allowHosts:   ts.AllowResponseHosts,
			opts:         opts,
		})
	}
	return out, nil
}

func (t *Tool) Spec() exec.ToolSpec { return t.spec }

// Approval: a remote tool runs without asking, unless its arguments hold a
// secret placeholder: the tool server would receive the secret's value,
// so a person approves the call, every time, as for an MCP tool (no allow
// rule nor approval for the session covers it).
func (t *Tool) Approval(_ context.Context, call exec.ToolCall) (exec.Approval, bool, error) {
	var args any
	if len(bytes.TrimSpace(call.Arguments)) > 0 {
		if err := json.Unmarshal(call.Arguments, &args); err != nil {
			return exec.Approval{}, false, fmt.Errorf("invalid arguments: %v", err)
		}
	}
	if !prompt.HoldsPlaceholder(args) {
		return exec.Approval{}, false, nil
	}
	var pretty bytes.Buffer
	enc := json.NewEncoder(&pretty)
	enc.SetEscapeHTML(false) // shown as sent
	enc.SetIndent("", "  ")
	if err := enc.Encode(args); err != nil {
		return exec.Approval{}, false, err
	}
	return exec.Approval{
		Show:   fmt.Sprintf("Remote tool %s at %s, with the arguments (each secret placeholder is sent as its value):\n%s", t.spec.Name, t.url.Redacted(), strings.TrimSuffix(pretty.String(), "\n")),
		Secret: true,
	}, true, nil
}

// Close stops the run's callback server (shared: closing any tool closes
// it for all).
func (t *Tool) Close() error { return t.opts.Server.Close() }

// Call invokes the tool on its server and waits for the tool_result, asking
// the user_choice questions that come meanwhile. Problems of the server
// (no acknowledgement, no result in time) are error results for the model;
// errors that stop the run (an interrupt, a bad answer line, the run's
// context) are returned.
func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	args, err := t.expandArgs(call.Arguments)
	if err != nil {
		return t.errorResult("invalid arguments: %v", err), nil
	}
	cb, err := t.opts.Server.callbackURL(t.callbackHost)
	if err != nil {
		return exec.Result{}, fmt.Errorf("remote tool %s: %w", t.name, err)
	}
	p := &pending{
		tool:    t,
		groupID: t.opts.RunID,
		id:      call.ID,
		callID:  randomID("hitl_"),
		done:    make(chan outcome, 1),
		choices: make(chan UserChoice, queuedChoices),
	}
	if err := t.opts.Server.register(p); err != nil {
		return t.errorResult("%v", err), nil
	}
	defer t.opts.Server.unregister(p)
	t.progress("waiting for %s at %s…", t.name, shownURL(t.url))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ack := make(chan error, 1)
	inv := Invocation{Type: "tool_call", GroupID: p.groupID, ID: p.id, CallID: p.callID, Name: t.name, Arguments: args, CallbackURL: cb}
	go func() { ack <- t.invoke(ctx, inv) }()
	return t.wait(ctx, p, ack)
}

// wait runs the pending call to its end. The timeout is paused while a
// user_choice is being asked and answered.
func (t *Tool) wait(ctx context.Context, p *pending, ack <-chan error) (exec.Result, error) {
	remaining := t.timeout
	timer := time.NewTimer(remaining)
	defer timer.Stop()
	started := time.Now()
	var undelivered error // the last selection that could not be POSTed
	for {
		// A result that has arrived wins over anything queued behind it.
		select {
		case o := <-p.done:
			return t.result(o), nil
		default:
		}
		select {
		case o := <-p.done:
			return t.result(o), nil
		case err := <-ack:
			ack = nil
			if err != nil {
				return t.errorResult("the tool server did not acknowledge the call: %v. hitl does not retry it.", err), nil
			}
		case c := <-p.choices:
			timer.Stop()
			remaining -= time.Since(started)
			res, err := t.choose(ctx, p, c)
			if err != nil {
				return exec.Result{}, err
			}
			if res.end != nil {
				return *res.end, nil
			}
			if res.undelivered != nil {
				undelivered = res.undelivered
			}
			started = time.Now()
			timer.Reset(max(remaining, 0))
		case <-timer.C:
			msg := fmt.Sprintf("the tool server sent no tool_result within the toolset's timeout (%s); the call was abandoned and hitl does not retry it.", t.timeout)
			if undelivered != nil {
				msg += fmt.Sprintf(" The user's choice could not be delivered to the tool: %v.", undelivered)
			}
			return t.errorResult("%s", msg), nil
		case <-ctx.Done():
			return exec.Result{}, context.Cause(ctx)
		}
	}
}

type chooseResult struct {
	end         *exec.Result // the call ends with this result
	undelivered error        // the selection could not be POSTed
}

// choose asks one user_choice and POSTs the selection.
func (t *Tool) choose(ctx context.Context, p *pending, c UserChoice) (chooseResult, error) {
	q, ids := t.question(p, c)
	ans, err := t.opts.Asker.Ask(ctx, q)
	if err != nil {
		return chooseResult{}, err
	}
	select {
	case o := <-p.done: // the tool finished while the user was asked
		r := t.result(o)
		return chooseResult{end: &r}, nil
	default:
	}
	if ans.Unanswered() {
		// Never the default: it may grant a permission nobody gave.
		t.opts.Server.unregister(p)
		r := t.errorResult("the tool asked the user %q, and nobody was available to answer (%s); no choice was sent to the tool and the call was abandoned.", c.Prompt, why(ans.Source))
		return chooseResult{end: &r}, nil
	}
	selected := c.Default // dismissed: the default, as seed 000 says
	if ans.Action == prompt.Accept {
		selected = -1
		var id string
		_ = json.Unmarshal(ans.Content, &id)
		for i, oid := range ids {
			if oid == id {
				selected = i
			}
		}
		if selected < 0 { // never a guess: the front ends check answers
			t.opts.Server.unregister(p)
			r := t.errorResult("the answer to %q names none of its choices; nothing was sent to the tool and the call was abandoned.", c.Prompt)
			return chooseResult{end: &r}, nil
		}
	}
	if err := t.respond(ctx, c.ResponseURL, Selection{ID: p.id, Selected: selected}); err != nil {
		if ctx.Err() != nil {
			return chooseResult{}, context.Cause(ctx)
		}
		t.progress("%s: the user's choice could not be sent to the tool: %v", t.name, err)
		return chooseResult{undelivered: err}, nil
	}
	return chooseResult{}, nil
}

// question makes the canonical question of a user_choice. Option ids are
// the labels, made unique when labels repeat; ids[i] is choice i's id.
func (t *Tool) question(p *pending, c UserChoice) (prompt.Question, []string) {
	ids := optionIDs(c.Choices)
	opts := make([]prompt.Option, len(c.Choices))
	for i, label := range c.Choices {
		opts[i] = prompt.Option{ID: ids[i], Label: label}
	}
	def, _ := json.Marshal(ids[c.Default])
	return prompt.Question{
		CallID:  p.id,
		Tool:    t.name,
		Kind:    prompt.KindChoice,
		Message: c.Prompt,
		Options: opts,
		Default: def,
		Consent: prompt.ConsentChoice,
	}, ids
}

// optionIDs returns the labels, with "#i" appended to each label that
// repeats (and more while that still collides).
func optionIDs(labels []string) []string {
	count := map[string]int{}
	for _, l := range labels {
		count[l]++
	}
	ids := make([]string, len(labels))
	used := map[string]bool{}
	for i, l := range labels {
		if count[l] == 1 {
			ids[i] = l
			used[l] = true
		}
	}
	for i, l := range labels {
		if ids[i] != "" {
			continue
		}
		id := fmt.Sprintf("%s #%d", l, i)
		for used[id] {
			id += "'"
		}
		ids[i] = id
		used[id] = true
	}
	return ids
}

// invoke POSTs the invocation; nil means the server acknowledged it (2xx).
func (t *Tool) invoke(ctx context.Context, inv Invocation) error {
	body, _ := json.Marshal(inv)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.post(req, shownURL(t.url))
}

// respond POSTs a selection to a user_choice's response_url. The toolset's
// headers go along only when response_url is on the tool server's own
// host and port.
func (t *Tool) respond(ctx context.Context, responseURL string, sel Selection) error {
	ctx, cancel := context.WithTimeout(ctx, responseTimeout)
	defer cancel()
	u, err := url.Parse(responseURL)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(sel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if strings.EqualFold(u.Host, t.url.Host) && u.Scheme == t.url.Scheme {
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	return t.post(req, shownURL(u))
}

func (t *Tool) post(req *http.Request, shown string) error {
	resp, err := t.opts.Client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // its message names the full URL
		}
		return fmt.Errorf("POST %s: %w", shown, err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		msg := fmt.Sprintf("POST %s: %s", shown, resp.Status)
		if s := strings.TrimSpace(string(snippet)); s != "" {
			msg += ": " + s
		}
		return errors.New(msg)
	}
	return nil
}

// expandArgs substitutes secret placeholders inside the string values of the
// arguments, so the JSON stays valid whatever the secret holds.
func (t *Tool) expandArgs(args json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}"), nil
	}
	if t.opts.Secrets == nil || !bytes.Contains(args, []byte("HITL_SECRET_")) {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	out, err := json.Marshal(expandValue(v, t.opts.Secrets))
	return out, err
}

func expandValue(v any, s Secrets) any {
	switch v := v.(type) {
	case string:
		return s.Expand(v)
	case []any:
		for i := range v {
			v[i] = expandValue(v[i], s)
		}
	case map[string]any:
		for k := range v {
			v[k] = expandValue(v[k], s)
		}
	}
	return v
}

func (t *Tool) result(o outcome) exec.Result {
	text := o.text
	if t.opts.Secrets != nil {
		text = t.opts.Secrets.Mask(text)
	}
	return exec.Result{Text: text, IsError: o.isError}
}

func (t *Tool) errorResult(format string, args ...any) exec.Result {
	return exec.Result{IsError: true, Text: fmt.Sprintf("remote tool %s: ", t.name) + fmt.Sprintf(format, args...)}
}

func (t *Tool) progress(format string, args ...any) {
	if t.opts.Progress != nil {
		t.opts.Progress(fmt.Sprintf(format, args...))
	}
}

// why says in words why nobody answered.
func why(s prompt.Source) string {
	switch s {
	case prompt.SourceEOF:
		return "end of input"
	case prompt.SourceTimeout:
		return "no answer within --prompt-timeout"
	case prompt.SourcePolicy:
		return "no front end to ask on"
	}
	return string(s)
}

func randomID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
