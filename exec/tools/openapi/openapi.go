// Package openapi is cagent's openapi toolset: a tool for each operation of
// an OpenAPI document (fetched from the toolset's url when the run starts,
// or read from a file), called over HTTP. Like fetch and api, every call
// acts on the world: a person approves the method and exact URL (and the
// body), unless a permissions rule allows it.
package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/ext"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/exec/tools/api"
)

// MaxSpec bounds the document; a call is bounded as an api call is
// (api.Timeout, api.MaxBytes).
const MaxSpec = 10 << 20

// Options are how the toolset reaches the API.
type Options struct {
	Headers   map[string]string
	Mask      func(string) string // hides secret answers in results
	Transport http.RoundTripper
	// Sandbox is where hitl-ext, which reads the document (package ext),
	// starts; Getenv finds it (nil: os.Getenv).
	Sandbox *sandbox.Sandbox
	Getenv  func(string) string
}

// Instructions is the toolset's guidance (cagent's).
func Instructions(spec string) string {
	return fmt.Sprintf("## OpenAPI tools\n\nThese tools were generated from the OpenAPI specification at %s.\nEach tool corresponds to an API endpoint. Use the tool parameters as described.", spec)
}

// Load reads the document at spec (an http(s) URL, or a file path) and
// returns a tool for each operation, in path and method order.
func Load(ctx context.Context, spec string, o Options) ([]exec.Tool, error) {
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	client := &http.Client{Timeout: api.Timeout, Transport: o.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	data, err := read(ctx, client, spec, o.Headers)
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI document %s: %w", spec, err)
	}
	doc, err := ext.ReadOpenAPI(ctx, o.Sandbox, o.Getenv, spec, data)
	if err != nil {
		return nil, err
	}
	if doc.Error != "" {
		return nil, errors.New(doc.Error)
	}
	base, err := baseURL(doc.Servers, spec)
	if err != nil {
		return nil, err
	}
	var out []exec.Tool
	names := map[string]string{}
	for _, op := range doc.Operations {
		t := newTool(base, op, client, o)
		if prev, dup := names[t.name]; dup {
			return nil, fmt.Errorf("the OpenAPI document %s: operations %s and %s %s both make the tool %s", spec, prev, op.Method, op.Path, t.name)
		}
		names[t.name] = op.Method + " " + op.Path
		out = append(out, t)
	}
	return out, nil
}

func read(ctx context.Context, client *http.Client, spec string, headers map[string]string) ([]byte, error) {
	if !strings.HasPrefix(spec, "http://") && !strings.HasPrefix(spec, "https://") {
		real, err := filepath.EvalSymlinks(spec)
		if err != nil {
			return nil, err
		}
		for _, d := range []string{"/proc/", "/sys/", "/dev/"} {
			if strings.HasPrefix(real, d) {
				return nil, fmt.Errorf("%s is a system file, not an OpenAPI document", real)
			}
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("not a regular file")
		}
		if fi.Size() > MaxSpec {
			return nil, fmt.Errorf("%d bytes, more than %d", fi.Size(), MaxSpec)
		}
		return os.ReadFile(real)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, spec, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxSpec+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSpec {
		return nil, fmt.Errorf("more than %d bytes", MaxSpec)
	}
	return data, nil
}

// baseURL is the document's first server, resolved against its own URL,
// else the document's origin (cagent's rule).
func baseURL(servers []string, spec string) (string, error) {
	specURL, _ := url.Parse(spec)
	if len(servers) > 0 && servers[0] != "" {
		s := servers[0]
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
			if specURL == nil || specURL.Scheme == "" {
				return "", fmt.Errorf("the OpenAPI document %s: its server %q is relative, and the document is a file: give an absolute server URL", spec, s)
			}
			r, err := specURL.Parse(s)
			if err != nil {
				return "", fmt.Errorf("the OpenAPI document %s: server %q: %w", spec, s, err)
			}
			s = r.String()
		}
		return strings.TrimRight(s, "/"), nil
	}
	if specURL == nil || specURL.Scheme == "" {
		return "", fmt.Errorf("the OpenAPI document %s has no servers: name the API's URL in servers", spec)
	}
	return specURL.Scheme + "://" + specURL.Host, nil
}

// Tool is one operation.
type Tool struct {
	name, desc string
	base, path string
	method     string
	params     json.RawMessage
	in         map[string]string // parameter name → path, query, header, cookie
	client     *http.Client
	opts       Options
}

func newTool(base string, op ext.Operation, client *http.Client, o Options) *Tool {
	path, method := op.Path, op.Method
	t := &Tool{base: base, path: path, method: method, client: client, opts: o, in: map[string]string{}}
	t.name = sanitize(op.OperationID)
	if t.name == "" {
		t.name = sanitize(strings.ToLower(method) + "_" + path)
	}
	switch {
	case op.Summary != "":
		t.desc = op.Summary
	case op.Description != "":
		t.desc = op.Description
		if len(t.desc) > 200 {
			t.desc = t.desc[:200] + "..."
		}
	default:
		t.desc = method + " " + path
	}
	props := map[string]any{}
	required := []string{}
	for _, p := range op.Parameters {
		prop := p.Schema
		if prop == nil {
			prop = map[string]any{"type": "string"}
		}
		if p.Description != "" {
			prop["description"] = p.Description
		}
		props[p.Name] = prop
		t.in[p.Name] = p.In
		if p.Required || p.In == "path" {
			required = append(required, p.Name)
		}
	}
	for name, prop := range op.Body {
		props["body_"+name] = prop
	}
	for _, r := range op.BodyRequired {
		required = append(required, "body_"+r)
	}
	sort.Strings(required)
	t.params, _ = json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	return t
}

// sanitize makes an operation id or method_path a tool name (cagent's).
func sanitize(name string) string {
	name = strings.NewReplacer("/", "_", "-", "_", ".", "_", "{", "", "}", "").Replace(name)
	name = strings.Trim(name, "_")
	for strings.Contains(name, "__") {
		name = strings.ReplaceAll(name, "__", "_")
	}
	return name
}

func (t *Tool) Spec() exec.ToolSpec {
	return exec.ToolSpec{Name: t.name, Description: t.desc, Parameters: t.params}
}

// request builds the call: path parameters escaped into their place (a
// value can never add a segment, a query or another host), body_ fields
// into a JSON body, header and cookie parameters as a header and a
// cookie, the rest as the query. Every part is what the approval shows
// and the rules judge (api.Request).
func (t *Tool) request(args json.RawMessage) (api.Request, error) {
	r := api.Request{Method: t.method}
	var params map[string]any
	if err := json.Unmarshal(args, &params); err != nil {
		return r, fmt.Errorf("invalid arguments for %s: %v", t.name, err)
	}
	path := t.path
	query := url.Values{}
	body := map[string]any{}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := params[k]
		s, ok := v.(string)
		if !ok {
			j, _ := json.Marshal(v)
			s = string(j)
		}
		var err error
		switch {
		case strings.HasPrefix(k, "body_"):
			body[strings.TrimPrefix(k, "body_")] = v
		case strings.Contains(t.path, "{"+k+"}"):
			if s == "." || s == ".." || s == "" {
				return r, fmt.Errorf("%s: %s may not be %q: it would move the request to another path", t.name, k, s)
			}
			path = strings.ReplaceAll(path, "{"+k+"}", url.PathEscape(s))
			r.PathSet = true
		case t.in[k] == "header":
			err = r.AddHeader(k, s, t.opts.Headers)
		case t.in[k] == "cookie":
			err = r.AddCookie(k, s, t.opts.Headers)
		default:
			query.Set(k, s)
			r.QuerySet = true
		}
		if err != nil {
			return r, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	if strings.Contains(path, "{") {
		return r, fmt.Errorf("%s needs every parameter of its path %s", t.name, t.path)
	}
	r.URL = t.base + path
	if len(query) > 0 {
		r.URL += "?" + query.Encode()
	}
	if len(body) > 0 {
		r.Body, _ = json.Marshal(body)
	}
	if err := r.Check(); err != nil {
		return r, fmt.Errorf("%s: %w", t.name, err)
	}
	return r, nil
}

// Approval implements exec.Acting: every call is approved, as fetch's;
// the person sees, and rules judge, every part the model set.
func (t *Tool) Approval(_ context.Context, call exec.ToolCall) (exec.Approval, bool, error) {
	r, err := t.request(call.Arguments)
	if err != nil {
		return exec.Approval{}, false, err
	}
	return r.Approval("openapi " + t.name), true, nil
}

func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	r, err := t.request(call.Arguments)
	if err != nil {
		return exec.Result{IsError: true, Text: err.Error()}, nil
	}
	req, err := r.HTTP(ctx, t.opts.Headers)
	if err != nil {
		return exec.Result{IsError: true, Text: err.Error()}, nil
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	return api.Send(ctx, t.client, req, t.opts.Mask)
}
