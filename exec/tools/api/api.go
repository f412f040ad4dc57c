// Package api is cagent's api toolset: one tool per toolset that calls an
// HTTP endpoint the agent file describes — GET with the call's arguments
// put into the endpoint's ${name} places, POST with them as a JSON body.
// A call acts on the world: a person approves it (method and the exact
// URL), unless a permissions rule allows it; approved "for this session" it
// holds for the endpoint's origin.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/exec"
)

// Config is an api toolset's api_config.
type Config struct {
	Name        string
	Instruction string
	Endpoint    string
	Method      string // GET or POST
	Headers     map[string]string
	// Args are the JSON Schema properties of the tool's arguments,
	// Required those it must have.
	Args     json.RawMessage
	Required []string
	// OutputSchema describes the response body (told to the model).
	OutputSchema json.RawMessage
}

// Limits of one call.
const (
	Timeout  = 30 * time.Second
	MaxBytes = 1 << 20
)

var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// Tool is the toolset's one tool.
type Tool struct {
	cfg       Config
	client    *http.Client
	mask      func(string) string
	transport http.RoundTripper
}

// New returns the tool of c (checked by the config loader). mask hides secret answers
// in results (nil: none); transport sends the requests (nil: the default).
func New(c Config, mask func(string) string, transport http.RoundTripper) *Tool {
	if transport == nil {
		transport = http.DefaultTransport
	}
	client := &http.Client{
		Timeout:   Timeout,
		Transport: transport,
		// The approved URL is the one requested: a redirect is reported,
		// never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Tool{cfg: c, client: client, mask: mask}
}

func (t *Tool) Spec() exec.ToolSpec {
	props := t.cfg.Args
	if len(props) == 0 {
		props = json.RawMessage(`{}`)
	}
	required := t.cfg.Required
	if required == nil {
		required = []string{}
	}
	params, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	desc := t.cfg.Instruction
	if len(t.cfg.OutputSchema) > 0 {
		desc += "\n\nThe response body is JSON fitting this schema: " + string(t.cfg.OutputSchema)
	}
	return exec.ToolSpec{Name: t.cfg.Name, Description: desc, Parameters: params}
}

// request is what a call sends: the arguments in the endpoint's ${name}
// places (escaped), and for a POST all of them as the JSON body.
func (t *Tool) request(args json.RawMessage) (Request, error) {
	r := Request{Method: t.cfg.Method, URL: t.cfg.Endpoint}
	var params map[string]any
	if len(bytes.TrimSpace(args)) > 0 {
		if err := json.Unmarshal(args, &params); err != nil {
			return r, fmt.Errorf("invalid arguments for %s: %v", t.cfg.Name, err)
		}
	}
	if r.Method == http.MethodPost {
		r.Body, _ = json.Marshal(params)
		if params == nil {
			r.Body = []byte("{}")
		}
	}
	query := strings.Index(r.URL, "?")
	var missing []string
	var b strings.Builder
	last := 0
	for _, m := range placeholder().FindAllStringSubmatchIndex(r.URL, -1) {
		b.WriteString(r.URL[last:m[0]])
		name := r.URL[m[2]:m[3]]
		v, ok := params[name]
		if !ok {
			missing = append(missing, name)
		}
		s, isString := v.(string)
		if !isString && ok {
			j, _ := json.Marshal(v)
			s = string(j)
		}
		// Escaped: an argument fills its place and can never add a path
		// segment, a query parameter or another host; nor climb out of
		// the path the rules and the person saw.
		if s == "." || s == ".." {
			return r, fmt.Errorf("%s: %s may not be %q: it would move the request to another path", t.cfg.Name, name, s)
		}
		if query >= 0 && m[0] > query {
			b.WriteString(url.QueryEscape(s))
			r.QuerySet = true
		} else {
			b.WriteString(url.PathEscape(s))
			r.PathSet = true
		}
		last = m[1]
	}
	b.WriteString(r.URL[last:])
	if len(missing) > 0 {
		return r, fmt.Errorf("%s needs %s: the endpoint %s has a place for each", t.cfg.Name, strings.Join(missing, ", "), t.cfg.Endpoint)
	}
	r.URL = b.String()
	if err := r.Check(); err != nil {
		return r, fmt.Errorf("%s: %w", t.cfg.Name, err)
	}
	return r, nil
}

// Approval implements exec.Acting: the method, the exact URL and the body
// of a POST are what a person approves and what rules judge (url, path,
// query, body); an allow rule must judge each part the arguments fill.
func (t *Tool) Approval(_ context.Context, call exec.ToolCall) (exec.Approval, bool, error) {
	r, err := t.request(call.Arguments)
	if err != nil {
		return exec.Approval{}, false, err
	}
	return r.Approval("api " + t.cfg.Name), true, nil
}

// Approval is what a person approves of r. An approval "for this
// session" holds for keyPrefix, r's origin and the headers and cookies
// the model set, as they are: another value is asked again.
func (r *Request) Approval(keyPrefix string) exec.Approval {
	u, _ := url.Parse(r.URL)
	key := keyPrefix + " " + u.Scheme + "://" + u.Host
	for _, h := range r.Header {
		key += "\n" + h[0] + ": " + h[1]
	}
	if len(r.Cookies) > 0 {
		key += "\nCookie: " + r.cookieHeader()
	}
	return exec.Approval{
		Args:       r.Args(),
		Parts:      r.Parts(),
		Show:       r.Show(),
		SessionKey: key,
	}
}

func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	r, err := t.request(call.Arguments)
	if err != nil {
		return exec.Result{IsError: true, Text: err.Error()}, nil
	}
	req, err := r.HTTP(ctx, t.cfg.Headers)
	if err != nil {
		return exec.Result{IsError: true, Text: err.Error()}, nil
	}
	return Send(ctx, t.client, req, t.mask)
}

// Send sends req with client (one that follows no redirect) and makes its
// response a result: the body cut at MaxBytes, a redirect reported and not
// followed (the approved URL is the one requested), a 4xx or 5xx an error
// result; mask (nil: none) hides secret answers in the text. Only the end
// of ctx is an error.
func Send(ctx context.Context, client *http.Client, req *http.Request, mask func(string) string) (exec.Result, error) {
	masked := func(s string) string {
		if mask == nil {
			return s
		}
		return mask(s)
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return exec.Result{}, ctx.Err()
		}
		return exec.Result{IsError: true, Text: masked(fmt.Sprintf("request failed: %v", err))}, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
	if err != nil {
		return exec.Result{IsError: true, Text: masked(fmt.Sprintf("reading the response: %v", err))}, nil
	}
	text := string(data)
	if len(data) > MaxBytes {
		text = string(data[:MaxBytes]) + fmt.Sprintf("\n[the response was cut at %d bytes]", MaxBytes)
	}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return exec.Result{IsError: true, Text: masked(fmt.Sprintf("HTTP %d: redirected to %s, not followed (the approved URL is the one requested)", resp.StatusCode, resp.Header.Get("Location")))}, nil
	case resp.StatusCode >= 400:
		return exec.Result{IsError: true, Text: masked(fmt.Sprintf("HTTP %d: %s", resp.StatusCode, text))}, nil
	}
	return exec.Result{Text: masked(text)}, nil
}
