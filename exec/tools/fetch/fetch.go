// Package fetch is cagent's fetch toolset: fetch{urls, format, timeout?}
// GETs each URL and returns its body (HTML as Markdown or text on request).
//
// Every call needs approval (exec.Acting): the gate asks a person per call
// unless a rule allows every URL (fetch:urls=https://docs.x/*). Only GET is
// ever sent, only to http and https URLs without user info; a redirect is
// followed only within the URL's origin (scheme, host and port): one to
// another origin stops there and the result tells the model the target, so
// fetching it is a new call, approved anew. Bodies are cut at MaxBytes,
// requests at the timeout, and results masked for secrets. robots.txt is
// not read (cagent reads it): that would be a request nobody approved.
package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hitl-dev/hitl/exec"
)

// Name is the tool's name.
const Name = "fetch"

// Bounds and defaults.
const (
	DefaultTimeout = 30 * time.Second
	// MaxTimeout bounds the timeout a call asks for.
	MaxTimeout = 2 * time.Minute
	// DefaultMaxBytes is the most of a body read (cagent's 1 MB).
	DefaultMaxBytes = 1 << 20
	// MaxURLs is the most URLs of one call.
	MaxURLs = 10
	// maxRedirects bounds the redirects followed within an origin.
	maxRedirects = 10
)

// Instructions is the toolset's guidance for the system prompt.
const Instructions = `## Fetch Tool

Fetch content from HTTP/HTTPS URLs. Supports multiple URLs per call and output format selection (text, markdown, html). Each call may need a person's approval; a redirect to another host is not followed: fetch its target in a new call.`

// Secrets masks secret values in what a server returns (prompt.Secrets).
type Secrets interface {
	Mask(text string) string
}

// Options configure the tool.
type Options struct {
	// Timeout bounds each request, body included (the toolset's timeout;
	// default 30 s). A call's timeout overrides it, up to MaxTimeout.
	Timeout time.Duration
	// MaxBytes is the most of a body read (default 1 MiB); a longer body
	// is cut, with a note saying so.
	MaxBytes int64
	// Secrets masks results (nil: none).
	Secrets Secrets
	// Transport sends the requests (nil: a clone of
	// http.DefaultTransport, which honours the proxy variables).
	Transport http.RoundTripper
	// UserAgent is sent with each request (default "hitl").
	UserAgent string
	// Judge says what the permissions rules decide of fetching a URL
	// alone: allowed by a rule, or refused (denied or asked). A redirect
	// within the origin is re-judged with it (DESIGN §12). Nil: no rules.
	Judge func(url string) (allowed, refused bool)
	// HTML renders an HTML page as Markdown (markdown) or text, for those
	// formats (hitl-ext does it: package ext). Nil: the page is returned
	// as it came.
	HTML func(ctx context.Context, page string, markdown bool) (string, error)
}

// Tool is the fetch tool.
type Tool struct {
	opts Options
}

var _ exec.Acting = (*Tool)(nil)

// New returns the tool.
func New(o Options) *Tool {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if o.UserAgent == "" {
		o.UserAgent = "hitl"
	}
	return &Tool{opts: o}
}

func (t *Tool) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name:        Name,
		Description: "Fetch content from one or more HTTP/HTTPS URLs. Returns the response body and metadata.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"urls":{"type":"array","items":{"type":"string"},"description":"Array of URLs to fetch","minItems":1,"maxItems":` + strconv.Itoa(MaxURLs) + `},` +
			`"format":{"type":"string","description":"The format to return the content in (text, markdown, or html)","enum":["text","markdown","html"]},` +
			`"timeout":{"type":"integer","description":"Request timeout in seconds (default: ` + strconv.Itoa(int(t.opts.Timeout/time.Second)) + `)","minimum":1,"maximum":` + strconv.Itoa(int(MaxTimeout/time.Second)) + `}},` +
			`"required":["urls","format"]}`),
	}
}

type request struct {
	urls    []*url.URL
	format  string
	timeout time.Duration
}

// parse checks a call's arguments: the URLs are parsed once here, and both
// the approval and the fetch use what parse returns.
func (t *Tool) parse(raw json.RawMessage) (request, error) {
	var a struct {
		URLs    []string `json:"urls"`
		Format  string   `json:"format"`
		Timeout *float64 `json:"timeout"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return request{}, fmt.Errorf("invalid arguments: %v", err)
	}
	r := request{format: a.Format, timeout: t.opts.Timeout}
	switch a.Format {
	case "", "text", "markdown", "html":
	default:
		return r, fmt.Errorf("invalid arguments: format %q is not one of text, markdown, html", a.Format)
	}
	if a.Timeout != nil {
		if *a.Timeout <= 0 {
			return r, errors.New("invalid arguments: timeout must be a positive number of seconds")
		}
		r.timeout = time.Duration(min(*a.Timeout, MaxTimeout.Seconds()) * float64(time.Second))
	}
	switch {
	case len(a.URLs) == 0:
		return r, errors.New("invalid arguments: urls is empty: give at least one URL")
	case len(a.URLs) > MaxURLs:
		return r, fmt.Errorf("invalid arguments: at most %d URLs per call (got %d)", MaxURLs, len(a.URLs))
	}
	for _, s := range a.URLs {
		u, err := checkURL(s)
		if err != nil {
			return r, fmt.Errorf("invalid arguments: %s: %v", strconv.QuoteToASCII(s), err)
		}
		r.urls = append(r.urls, u)
	}
	return r, nil
}

// checkURL accepts absolute http and https URLs with a host and no user
// info (user@host could dress one host as another), and returns the URL as
// it will be requested: host in lower case, no fragment (never sent).
func checkURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, errors.New("not a URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("only http and https URLs are fetched")
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return nil, errors.New("the URL has no host")
	case u.User != nil:
		return nil, errors.New("URLs with user info (user@host) are not fetched")
	case ambiguousPath(u):
		return nil, errors.New("the path holds a . or .. segment, or an encoded slash or backslash (a server would read it as another path than the one approved): give the path as it resolves")
	}
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// ambiguousPath reports whether a server could read u's path as another
// path than the text a rule (fetch:urls=https://docs.x/public/*) or a
// person judged: a . or .. segment, plain or percent-encoded, or a slash
// or backslash hidden in a segment (%2F, %5C, \).
func ambiguousPath(u *url.URL) bool {
	raw := strings.ToLower(u.EscapedPath())
	if strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") || strings.Contains(u.Path, `\`) {
		return true
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// shown writes a URL for a person. url.URL.String escapes what is not
// ASCII in hosts and paths; whatever else is not printable ASCII is quoted
// with escapes (a look-alike host, a control character).
func shown(u *url.URL) string { return ascii(u.String()) }

func ascii(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return strconv.QuoteToASCII(s)
		}
	}
	return s
}

// Approval says every call needs approval. Args holds the URLs as they
// will be requested, so fetch:urls=GLOB rules match them (each must); Show
// lists them. The session key is the call's set of origins: approving "for
// the session" lets later calls to exactly those origins run.
func (t *Tool) Approval(_ context.Context, call exec.ToolCall) (exec.Approval, bool, error) {
	r, err := t.parse(call.Arguments)
	if err != nil {
		return exec.Approval{}, false, err
	}
	urls := make([]any, len(r.urls))
	var lines, origins []string
	for i, u := range r.urls {
		urls[i] = u.String()
		lines = append(lines, "GET "+shown(u))
		if o := ascii(origin(u)); !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
	}
	slices.Sort(origins)
	show := strings.Join(lines, "\n") + "\n\n(for the session: any URL of " + strings.Join(origins, ", ") + ")"
	return exec.Approval{
		Args:       map[string]any{"urls": urls},
		Show:       show,
		SessionKey: "fetch " + strings.Join(origins, " "),
	}, true, nil
}

// result is one URL's outcome, in cagent's shape.
type result struct {
	URL           string `json:"url"`
	StatusCode    int    `json:"statusCode"`
	Status        string `json:"status"`
	ContentType   string `json:"contentType,omitempty"`
	ContentLength int    `json:"contentLength"`
	Body          string `json:"body,omitempty"`
	Error         string `json:"error,omitempty"`
}

// Call fetches the URLs in order. One URL: cagent's text result (an error
// result when it could not be fetched); several: a JSON array of results.
// The run's end (ctx) is an error.
func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	r, err := t.parse(call.Arguments)
	if err != nil {
		return exec.Result{IsError: true, Text: err.Error()}, nil
	}
	results := make([]result, 0, len(r.urls))
	for _, u := range r.urls {
		res := t.fetch(ctx, u, r.format, r.timeout)
		if err := ctx.Err(); err != nil {
			return exec.Result{}, fmt.Errorf("fetch stopped: %w", err)
		}
		results = append(results, t.mask(res))
	}
	if len(results) == 1 {
		res := results[0]
		if res.Error != "" {
			return exec.Result{IsError: true, Text: fmt.Sprintf("Error fetching %s: %s", res.URL, res.Error)}, nil
		}
		return exec.Result{Text: fmt.Sprintf("Successfully fetched %s (Status: %d, Length: %d bytes):\n\n%s",
			res.URL, res.StatusCode, res.ContentLength, res.Body)}, nil
	}
	data, err := json.Marshal(results)
	if err != nil {
		return exec.Result{}, fmt.Errorf("fetch: %w", err)
	}
	return exec.Result{Text: string(data)}, nil
}

// mask hides secret values in everything a server chose.
func (t *Tool) mask(r result) result {
	if t.opts.Secrets == nil {
		return r
	}
	m := t.opts.Secrets.Mask
	r.Status, r.ContentType, r.Body, r.Error = m(r.Status), m(r.ContentType), m(r.Body), m(r.Error)
	r.ContentLength = len(r.Body)
	return r
}

// judgeRedirect re-judges a redirect within the origin: a target the rules
// refuse is not followed, nor one that a rule allowing the first URL does
// not allow (/public/* redirected to /admin/...). A first URL a person
// approved covers its origin.
func (t *Tool) judgeRedirect(from, to *url.URL) error {
	if t.opts.Judge == nil {
		return nil
	}
	allowed, refused := t.opts.Judge(to.String())
	if refused {
		return &redirectRefused{to: to, why: "the permissions rules do not let it run unasked"}
	}
	if fromAllowed, _ := t.opts.Judge(from.String()); fromAllowed && !allowed {
		return &redirectRefused{to: to, why: "the rule that allowed the first URL does not allow it"}
	}
	return nil
}

// redirectRefused stops a redirect within the origin that the rules do not
// cover as they covered the first URL.
type redirectRefused struct {
	to  *url.URL
	why string
}

func (e *redirectRefused) Error() string { return "redirect refused: " + e.why }

// redirectError stops a redirect that leaves the approved origin.
type redirectError struct{ to *url.URL }

func (e *redirectError) Error() string { return "redirect to another origin" }

func (t *Tool) fetch(ctx context.Context, u *url.URL, format string, timeout time.Duration) result {
	res := result{URL: u.String()}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{
		Transport: t.opts.Transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if origin(req.URL) != origin(u) {
				return &redirectError{to: req.URL}
			}
			if err := t.judgeRedirect(u, req.URL); err != nil {
				return err
			}
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), http.NoBody)
	if err != nil {
		res.Error = fmt.Sprintf("invalid URL: %v", err)
		return res
	}
	req.Header.Set("User-Agent", t.opts.UserAgent)
	req.Header.Set("Accept", accept(format))
	resp, err := client.Do(req)
	if err != nil {
		res.Error = describe(ctx, err, timeout)
		return res
	}
	defer resp.Body.Close()
	res.StatusCode, res.Status, res.ContentType = resp.StatusCode, resp.Status, resp.Header.Get("Content-Type")
	body, err := io.ReadAll(io.LimitReader(resp.Body, t.opts.MaxBytes+1))
	if err != nil {
		res.Error = "reading the body: " + describe(ctx, err, timeout)
		return res
	}
	cut := int64(len(body)) > t.opts.MaxBytes
	if cut {
		body = body[:t.opts.MaxBytes]
		for len(body) > 0 && !utf8.Valid(body[max(len(body)-3, 0):]) && !utf8.RuneStart(body[len(body)-1]) {
			body = body[:len(body)-1] // drop a character cut in two
		}
	}
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	if strings.Contains(strings.ToLower(res.ContentType), "text/html") && (format == "markdown" || format == "text") && t.opts.HTML != nil {
		rendered, err := t.opts.HTML(ctx, text, format == "markdown")
		if err != nil {
			res.Error = fmt.Sprintf("the page is HTML and could not be rendered as %s (ask for format html to get it as it came): %v", format, err)
			return res
		}
		text = rendered
	}
	if cut {
		text += fmt.Sprintf("\n\n[... cut: the body is longer than %d bytes; only the first %d were read ...]", t.opts.MaxBytes, t.opts.MaxBytes)
	}
	res.Body, res.ContentLength = text, len(text)
	return res
}

// accept is cagent's Accept header for a format.
func accept(format string) string {
	switch format {
	case "markdown":
		return "text/markdown;q=1.0, text/plain;q=0.9, text/html;q=0.7, */*;q=0.1"
	case "html":
		return "text/html;q=1.0, text/plain;q=0.8, */*;q=0.1"
	case "text":
		return "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1"
	}
	return "text/plain;q=1.0, */*;q=0.1"
}

// describe says why a request failed, in words for the model.
func describe(ctx context.Context, err error, timeout time.Duration) string {
	var rr *redirectRefused
	if errors.As(err, &rr) {
		return fmt.Sprintf("the server redirects to %s, which was not followed: %s; fetch that URL in a new call (it needs its own approval)", shown(rr.to), rr.why)
	}
	var re *redirectError
	if errors.As(err, &re) {
		return fmt.Sprintf("the server redirects to %s, on another host: it was not followed; fetch that URL in a new call to follow it (it needs its own approval)", shown(re.to))
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("timed out after %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return "request failed: " + err.Error()
}
