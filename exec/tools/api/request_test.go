package api

import (
	"context"
	"strings"
	"testing"
)

// What a person is shown of a request is what is sent: headers trimmed as
// net/http sends them; a part that cannot be shown as sent is refused.
func TestRequestShownAsSent(t *testing.T) {
	for _, tc := range []struct {
		name, header, value string
		author              map[string]string
		err                 string
	}{
		{"trimmed", "x-http-method-override", "  DELETE\t", nil, ""},
		{"control", "X-Mode", "a\x1bb", nil, "U+001B"},
		{"newline", "X-Mode", "a\r\nHost: evil", nil, "U+000D"},
		{"bidi", "X-Mode", "a\u202eb", nil, "U+202E"},
		{"binary", "X-Mode", "a\xffb", nil, "not UTF-8 text"},
		{"huge", "X-Mode", strings.Repeat("a", MaxShownHeader+1), nil, "more than the 4096"},
		{"reserved", "host", "evil.example", nil, "written by hitl or the HTTP client"},
		{"author's", "authorization", "Bearer x", map[string]string{"Authorization": "${TOKEN}"}, "set by the agent file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Request{Method: "GET", URL: "http://x/items"}
			err := r.AddHeader(tc.header, tc.value, tc.author)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			req, err := r.HTTP(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			sent := req.Header.Get("X-Http-Method-Override")
			if sent != "DELETE" || !strings.Contains(r.Show(), "\nX-Http-Method-Override: "+sent) {
				t.Errorf("sent %q, shown %q", sent, r.Show())
			}
			if r.Args()["header.X-Http-Method-Override"] != sent || strings.Join(r.Parts(), ",") != "header.X-Http-Method-Override" {
				t.Errorf("args %v parts %v", r.Args(), r.Parts())
			}
		})
	}
}

func TestRequestCookieAndBodyBounds(t *testing.T) {
	r := Request{Method: "POST", URL: "http://x/items"}
	if err := r.AddCookie("session", "a;b=c", nil); err == nil {
		t.Error("cookie with ';': no error")
	}
	if err := r.AddCookie("session", "abc", map[string]string{"cookie": "auth=1"}); err == nil || !strings.Contains(err.Error(), "headers set Cookie") {
		t.Errorf("cookie beside the author's Cookie header: %v", err)
	}
	r.Body = []byte(strings.Repeat("a", MaxShownBody+1))
	if err := r.Check(); err == nil || !strings.Contains(err.Error(), "the body is") {
		t.Errorf("huge body: %v", err)
	}
	r.Body = []byte("\xff")
	if err := r.Check(); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("binary body: %v", err)
	}
}
