package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/fetch/htmltext"
)

// server records every request it gets.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "METHOD path"
}

func (s *server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

const page = `<!doctype html><html><head><title>T</title><style>p{}</style><script>alert(1)</script></head>
<body><h1>Title</h1><p>Some <b>bold</b> and <a href="/x">a link</a>.</p>
<ul><li>one</li><li>two</li></ul><pre>code  kept
  as is</pre></body></html>`

// sites: a (with its routes) and b (another origin: another port).
func sites(t *testing.T) (a, b *server) {
	b = newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("b")) })
	a = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write([]byte("hello"))
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(page))
		case "/missing":
			http.NotFound(w, r)
		case "/same":
			http.Redirect(w, r, "/text", http.StatusTemporaryRedirect)
		case "/other":
			http.Redirect(w, r, b.URL+"/landing?q=1", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/big":
			w.Write([]byte(strings.Repeat("x", 3<<20)))
		case "/secret":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("token=s3cr3t-value"))
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}
	})
	return a, b
}

type masker struct{}

func (masker) Mask(s string) string { return strings.ReplaceAll(s, "s3cr3t-value", "***") }

func call(t *testing.T, tool *Tool, args string) exec.Result {
	t.Helper()
	res, err := tool.Call(context.Background(), exec.ToolCall{ID: "c", Name: Name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Call(%s): %v", args, err)
	}
	return res
}

func urls(u ...string) string {
	data, _ := json.Marshal(u)
	return string(data)
}

func TestResultShapes(t *testing.T) {
	a, _ := sites(t)
	tool := New(Options{Secrets: masker{}, HTML: render})
	cases := []struct {
		name, args string
		want       string
		isError    bool
	}{
		{"text", `{"urls":` + urls(a.URL+"/text") + `,"format":"text"}`,
			"Successfully fetched " + a.URL + "/text (Status: 200, Length: 5 bytes):\n\nhello", false},
		{"no format", `{"urls":` + urls(a.URL+"/text") + `}`,
			"Successfully fetched " + a.URL + "/text (Status: 200, Length: 5 bytes):\n\nhello", false},
		{"html kept", `{"urls":` + urls(a.URL+"/page") + `,"format":"html"}`,
			"Successfully fetched " + a.URL + "/page (Status: 200, Length: " + strconv.Itoa(len(page)) + " bytes):\n\n" + page, false},
		{"html as markdown", `{"urls":` + urls(a.URL+"/page") + `,"format":"markdown"}`,
			"Successfully fetched " + a.URL + "/page (Status: 200, Length: 82 bytes):\n\n# Title\n\nSome **bold** and [a link](/x).\n\n- one\n- two\n\n```\ncode  kept\n  as is\n```\n", false},
		{"html as text", `{"urls":` + urls(a.URL+"/page") + `,"format":"text"}`,
			"Successfully fetched " + a.URL + "/page (Status: 200, Length: 62 bytes):\n\nTitle\n\nSome bold and a link.\n\n- one\n- two\n\ncode  kept\n  as is\n", false},
		{"not found is a result", `{"urls":` + urls(a.URL+"/missing") + `,"format":"text"}`,
			"Successfully fetched " + a.URL + "/missing (Status: 404, Length: 19 bytes):\n\n404 page not found\n", false},
		{"masked", `{"urls":` + urls(a.URL+"/secret") + `,"format":"text"}`,
			"Successfully fetched " + a.URL + "/secret (Status: 200, Length: 9 bytes):\n\ntoken=***", false},
		{"fragment dropped, host lowered", `{"urls":` + urls(strings.Replace(a.URL, "http://", "HTTP://", 1)+"/text#frag") + `,"format":"text"}`,
			"Successfully fetched " + a.URL + "/text (Status: 200, Length: 5 bytes):\n\nhello", false},
		{"several", `{"urls":` + urls(a.URL+"/text", a.URL+"/missing", a.URL+"/other") + `,"format":"text"}`,
			`[{"url":"` + a.URL + `/text","statusCode":200,"status":"200 OK","contentType":"text/plain; charset=utf-8","contentLength":5,"body":"hello"},` +
				`{"url":"` + a.URL + `/missing","statusCode":404,"status":"404 Not Found","contentType":"text/plain; charset=utf-8","contentLength":19,"body":"404 page not found\n"},` +
				`{"url":"` + a.URL + `/other","statusCode":0,"status":"","contentLength":0,"error":"the server redirects to ` + strings.Replace(a.URL, a.URL, "", 1), false},
		{"file scheme", `{"urls":["file:///etc/passwd"],"format":"text"}`, `invalid arguments: "file:///etc/passwd": only http and https URLs are fetched`, true},
		{"ftp scheme", `{"urls":["ftp://x/y"],"format":"text"}`, `invalid arguments: "ftp://x/y": only http and https URLs are fetched`, true},
		{"relative", `{"urls":["/etc/passwd"],"format":"text"}`, `invalid arguments: "/etc/passwd": only http and https URLs are fetched`, true},
		{"user info", `{"urls":["https://docs.x@evil.example/"],"format":"text"}`, `invalid arguments: "https://docs.x@evil.example/": URLs with user info (user@host) are not fetched`, true},
		{"no host", `{"urls":["http:///x"],"format":"text"}`, `invalid arguments: "http:///x": the URL has no host`, true},
		// A rule fetch:urls=http://127.0.0.1:9/public/* judges the URL as
		// written; a server resolves dot segments and encoded slashes,
		// so the model could reach /admin through /public/.
		{"dot dot segment", `{"urls":["http://127.0.0.1:9/public/../admin"],"format":"text"}`, `invalid arguments: "http://127.0.0.1:9/public/../admin": the path holds a . or .. segment, or an encoded slash or backslash (a server would read it as another path than the one approved): give the path as it resolves`, true},
		{"dot segment", `{"urls":["http://127.0.0.1:9/public/./a"],"format":"text"}`, `invalid arguments: "http://127.0.0.1:9/public/./a": the path holds a . or .. segment, or an encoded slash or backslash (a server would read it as another path than the one approved): give the path as it resolves`, true},
		{"encoded dot dot", `{"urls":["http://127.0.0.1:9/public/%2E%2e/admin"],"format":"text"}`, `invalid arguments: "http://127.0.0.1:9/public/%2E%2e/admin": the path holds a . or .. segment, or an encoded slash or backslash (a server would read it as another path than the one approved): give the path as it resolves`, true},
		{"encoded slash", `{"urls":["http://127.0.0.1:9/public/..%2fadmin"],"format":"text"}`, `invalid arguments: "http://127.0.0.1:9/public/..%2fadmin": the path holds a . or .. segment, or an encoded slash or backslash (a server would read it as another path than the one approved): give the path as it resolves`, true},
		{"backslash", `{"urls":["http://127.0.0.1:9/public\\..\\admin"],"format":"text"}`, `invalid arguments: "http://127.0.0.1:9/public\\..\\admin": the path holds a . or .. segment, or an encoded slash or backslash (a server would read it as another path than the one approved): give the path as it resolves`, true},
		{"empty", `{"urls":[],"format":"text"}`, "invalid arguments: urls is empty: give at least one URL", true},
		{"too many", `{"urls":` + urls(strings.Split(strings.Repeat(a.URL+" ", 11), " ")[:11]...) + `,"format":"text"}`, "invalid arguments: at most 10 URLs per call (got 11)", true},
		{"bad format", `{"urls":` + urls(a.URL) + `,"format":"pdf"}`, `invalid arguments: format "pdf" is not one of text, markdown, html`, true},
		{"bad timeout", `{"urls":` + urls(a.URL) + `,"format":"text","timeout":0}`, "invalid arguments: timeout must be a positive number of seconds", true},
		{"not json", `{"urls":`, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, tool, c.args)
			ok := res.Text == c.want
			if c.name == "several" || c.want == "" {
				ok = strings.HasPrefix(res.Text, c.want)
			}
			if res.IsError != c.isError || !ok {
				t.Errorf("\n got %v %q\nwant %v %q", res.IsError, res.Text, c.isError, c.want)
			}
		})
	}
	for _, r := range a.requests() {
		if !strings.HasPrefix(r, "GET ") {
			t.Errorf("request %q is not a GET", r)
		}
	}
}

// Every call needs approval; Args carry the URLs as requested, so a rule
// on urls matches only when every URL does; Show escapes; the session key
// is the set of origins.
func TestApproval(t *testing.T) {
	tool := New(Options{})
	cases := []struct {
		name, args string
		show, key  string
		args2      string
	}{
		{"one allowed", `{"urls":["https://docs.example/a"],"format":"text"}`,
			"GET https://docs.example/a\n\n(for the session: any URL of https://docs.example:443)", "fetch https://docs.example:443", `{"urls":["https://docs.example/a"]}`},
		{"one of two outside", `{"urls":["https://docs.example/a","https://evil.example/"],"format":"text"}`,
			"GET https://docs.example/a\nGET https://evil.example/\n\n(for the session: any URL of https://docs.example:443, https://evil.example:443)",
			"fetch https://docs.example:443 https://evil.example:443", `{"urls":["https://docs.example/a","https://evil.example/"]}`},
		{"look-alike suffix", `{"urls":["https://docs.example.evil.example/a"],"format":"text"}`,
			"GET https://docs.example.evil.example/a\n\n(for the session: any URL of https://docs.example.evil.example:443)", "fetch https://docs.example.evil.example:443", `{"urls":["https://docs.example.evil.example/a"]}`},
		{"escaped", `{"urls":["https://docs.example/a\u202eb"],"format":"text"}`,
			"GET https://docs.example/a%E2%80%AEb\n\n(for the session: any URL of https://docs.example:443)", "fetch https://docs.example:443", `{"urls":["https://docs.example/a%E2%80%AEb"]}`},
		{"bidi in host", `{"urls":["https://dоcs.example/"],"format":"text"}`,
			"GET https://d%D0%BEcs.example/\n\n(for the session: any URL of \"https://d\\u043ecs.example:443\")", "", `{"urls":["https://d%D0%BEcs.example/"]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ap, ok, err := tool.Approval(context.Background(), exec.ToolCall{Name: Name, Arguments: json.RawMessage(c.args)})
			if err != nil || !ok {
				t.Fatalf("Approval: %v %v", ok, err)
			}
			if !strings.HasPrefix(ap.Show, c.show) || (c.key != "" && ap.SessionKey != c.key) {
				t.Errorf("show %q key %q", ap.Show, ap.SessionKey)
			}
			// The permission checker matches a rule on an array argument
			// when every element matches (DESIGN §7): the elements are the
			// URLs as they will be requested.
			if got, _ := json.Marshal(ap.Args); string(got) != c.args2 {
				t.Errorf("args %s, want %s", got, c.args2)
			}
		})
	}
	if _, _, err := tool.Approval(context.Background(), exec.ToolCall{Name: Name, Arguments: json.RawMessage(`{"urls":["file:///x"]}`)}); err == nil {
		t.Error("a file URL gets an approval")
	}
}

// A redirect within the origin is followed; one to another origin is not
// (the other server never hears of it) and the model is told the target.
func TestRedirects(t *testing.T) {
	a, b := sites(t)
	tool := New(Options{})
	res := call(t, tool, `{"urls":`+urls(a.URL+"/same")+`,"format":"text"}`)
	if res.IsError || !strings.HasSuffix(res.Text, "hello") {
		t.Errorf("same origin: %+v", res)
	}
	res = call(t, tool, `{"urls":`+urls(a.URL+"/other")+`,"format":"text"}`)
	want := "Error fetching " + a.URL + "/other: the server redirects to " + b.URL + "/landing?q=1, on another host: it was not followed; fetch that URL in a new call to follow it (it needs its own approval)"
	if !res.IsError || res.Text != want {
		t.Errorf("other origin:\n got %q\nwant %q", res.Text, want)
	}
	if got := b.requests(); len(got) != 0 {
		t.Errorf("the other origin was asked: %v", got)
	}
	res = call(t, tool, `{"urls":`+urls(a.URL+"/loop")+`,"format":"text"}`)
	if !res.IsError || !strings.Contains(res.Text, "stopped after 10 redirects") {
		t.Errorf("loop: %+v", res)
	}
	// https to http on the same host is another origin.
	u, _ := checkURL("https://h.example/x")
	v, _ := checkURL("http://h.example/x")
	w, _ := checkURL("https://H.example:443/y")
	if origin(u) == origin(v) || origin(u) != origin(w) {
		t.Errorf("origins: %s %s %s", origin(u), origin(v), origin(w))
	}
}

// Bodies are cut at MaxBytes (1 MiB by default) with a note.
func TestBodyCap(t *testing.T) {
	a, _ := sites(t)
	res := call(t, New(Options{HTML: render}), `{"urls":`+urls(a.URL+"/big")+`,"format":"text"}`)
	note := "\n\n[... cut: the body is longer than 1048576 bytes; only the first 1048576 were read ...]"
	if res.IsError || !strings.HasSuffix(res.Text, strings.Repeat("x", 100)+note) || len(res.Text) > DefaultMaxBytes+500 {
		t.Errorf("big body: %d chars, ends %q", len(res.Text), res.Text[max(len(res.Text)-200, 0):])
	}
	res = call(t, New(Options{MaxBytes: 10}), `{"urls":`+urls(a.URL+"/page")+`,"format":"html"}`)
	if !strings.Contains(res.Text, "\n\n<!doctype \n\n[... cut: the body is longer than 10 bytes") {
		t.Errorf("small cap: %q", res.Text)
	}
}

// A slow server ends at the timeout, the toolset's or the call's.
func TestTimeout(t *testing.T) {
	a, _ := sites(t)
	start := time.Now()
	res := call(t, New(Options{Timeout: 200 * time.Millisecond}), `{"urls":`+urls(a.URL+"/slow")+`,"format":"text"}`)
	if !res.IsError || res.Text != "Error fetching "+a.URL+"/slow: timed out after 200ms" {
		t.Errorf("toolset timeout: %+v", res)
	}
	start2 := time.Now()
	res = call(t, New(Options{Timeout: time.Hour}), `{"urls":`+urls(a.URL+"/slow")+`,"format":"text","timeout":1}`)
	if !res.IsError || res.Text != "Error fetching "+a.URL+"/slow: timed out after 1s" {
		t.Errorf("call timeout: %+v", res)
	}
	if d := time.Since(start2); d > 3*time.Second || start2.Sub(start) > 2*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
	// A call's timeout is capped at MaxTimeout.
	r, err := New(Options{}).parse(json.RawMessage(`{"urls":["http://x/"],"timeout":1e12}`))
	if err != nil || r.timeout != MaxTimeout {
		t.Errorf("timeout %s %v", r.timeout, err)
	}
}

// The run's end stops a fetch: an error, not a result.
func TestCancel(t *testing.T) {
	a, _ := sites(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := New(Options{}).Call(ctx, exec.ToolCall{ID: "c", Name: Name, Arguments: json.RawMessage(`{"urls":` + urls(a.URL+"/slow") + `}`)})
	if err == nil {
		t.Error("no error")
	}
}

func TestSpecIsCagents(t *testing.T) {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	s := New(Options{}).Spec()
	if err := json.Unmarshal(s.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if s.Name != "fetch" || len(schema.Properties) != 3 || schema.Properties["urls"] == nil || schema.Properties["format"] == nil ||
		schema.Properties["timeout"] == nil || strings.Join(schema.Required, ",") != "urls,format" {
		t.Errorf("%s", s.Parameters)
	}
}

// render is what hitl-ext does with a page.
func render(_ context.Context, page string, markdown bool) (string, error) {
	return htmltext.Render(page, markdown), nil
}

// A page that cannot be rendered in the format asked (no hitl-ext) is an
// error the model reads, saying how to get the page as it came, never the
// raw page passed off as the format.
func TestHTMLNotRenderedIsAnError(t *testing.T) {
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>hi</p>")
	}))
	defer a.Close()
	failing := func(context.Context, string, bool) (string, error) { return "", errors.New("hitl-ext not found") }
	res := call(t, New(Options{HTML: failing}), `{"urls":`+urls(a.URL)+`,"format":"markdown"}`)
	if !strings.Contains(res.Text, "could not be rendered as markdown (ask for format html to get it as it came): hitl-ext not found") {
		t.Errorf("result %+v", res)
	}
	if strings.Contains(res.Text, "<p>hi</p>") {
		t.Errorf("the raw page was returned: %+v", res)
	}
	res = call(t, New(Options{HTML: failing}), `{"urls":`+urls(a.URL)+`,"format":"html"}`)
	if !strings.Contains(res.Text, "<p>hi</p>") {
		t.Errorf("format html: %+v", res)
	}
}
