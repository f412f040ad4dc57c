package cassette

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	vcr "gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"
)

func TestMatch(t *testing.T) {
	rec := vcr.Request{Method: "POST", URL: "http://recorded.example/v1/chat/completions", Body: `{"a": 1, "b": [true, "x"]}`}
	cases := []struct {
		method, url, body string
		want              bool
	}{
		{"POST", "http://127.0.0.1:9/v1/chat/completions", `{"b":[true,"x"],"a":1}`, true}, // another host, key order
		{"POST", "http://127.0.0.1:9/v1/chat/completions/", `{"a":1,"b":[true,"x"]}`, true},
		{"GET", "http://127.0.0.1:9/v1/chat/completions", `{"a":1,"b":[true,"x"]}`, false},
		{"POST", "http://127.0.0.1:9/v1/messages", `{"a":1,"b":[true,"x"]}`, false},
		{"POST", "http://127.0.0.1:9/v1/chat/completions", `{"a":2,"b":[true,"x"]}`, false},
		{"POST", "http://127.0.0.1:9/v1/chat/completions", `not json`, false},
	}
	for _, c := range cases {
		r, _ := http.NewRequest(c.method, c.url, strings.NewReader(c.body))
		if got := Match(r, rec); got != c.want {
			t.Errorf("%s %s %s: %v, want %v", c.method, c.url, c.body, got, c.want)
		}
	}
}

func TestScrub(t *testing.T) {
	i := &vcr.Interaction{
		Request: vcr.Request{
			URL: "https://user:pw@api.example/v1/x?api-key=secret",
			Headers: http.Header{"Authorization": {"Bearer secret"}, "X-Api-Key": {"secret"}, "Content-Type": {"application/json"},
				"Anthropic-Version": {"2023-06-01"}, "Cookie": {"secret"}, "User-Agent": {"Go"}},
		},
		Response: vcr.Response{Headers: http.Header{"Set-Cookie": {"secret"}, "Content-Type": {"text/event-stream"}, "Openai-Organization": {"secret"}}},
	}
	if err := scrub(i); err != nil {
		t.Fatal(err)
	}
	if len(i.Request.Headers) != 2 || i.Request.Headers.Get("Anthropic-Version") == "" || len(i.Response.Headers) != 1 {
		t.Errorf("headers kept: %v / %v", i.Request.Headers, i.Response.Headers)
	}
	if i.Request.URL != "https://api.example/v1/x" {
		t.Errorf("url %q", i.Request.URL)
	}
}

// TestBounds: a response larger than MaxResponse is not recorded (the
// request fails saying so), and a cassette larger than MaxFile is not read.
func TestBounds(t *testing.T) {
	defer func(r, f int64) { MaxResponse, MaxFile = r, f }(MaxResponse, MaxFile)
	MaxResponse, MaxFile = 1024, 2048
	dir := t.TempDir()

	for _, c := range []struct {
		size int
		ok   bool
	}{{1024, true}, {1025, false}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strings.Repeat("x", c.size))
		}))
		cas, err := Record(filepath.Join(dir, "rec.yaml"), nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cas.Client().Get(srv.URL)
		if c.ok {
			if err != nil {
				t.Errorf("%d bytes: %v", c.size, err)
			} else {
				res.Body.Close()
			}
		} else if err == nil || !strings.Contains(err.Error(), "a response to record in the cassette passed 1 KiB") {
			t.Errorf("%d bytes: error %v, want one saying the response passed 1 KiB", c.size, err)
		}
		cas.Close()
		srv.Close()
	}

	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("version: 2\n"+strings.Repeat("#", 2048)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Replay(big); err == nil || !strings.Contains(err.Error(), "is larger than 2 KiB") {
		t.Errorf("replaying a cassette past MaxFile: error %v, want one saying it is larger than 2 KiB", err)
	}
}
