package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec"
)

func TestCall(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" "+string(body)+" "+r.Header.Get("Authorization"))
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "https://elsewhere.example/", http.StatusFound)
		case "/missing":
			http.Error(w, "no such puzzle", http.StatusNotFound)
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("x", MaxBytes+10)))
		default:
			_, _ = w.Write([]byte(`{"ok":true}`))
		}
	}))
	defer srv.Close()
	get := Config{Name: "puzzle", Endpoint: srv.URL + "/users/${user}/puzzles?day=${day}", Method: "GET", Headers: map[string]string{"Authorization": "Bearer t"}}
	post := Config{Name: "create", Endpoint: srv.URL + "/items", Method: "POST"}
	tests := []struct {
		name   string
		cfg    Config
		args   string
		result string // prefix
		isErr  bool
		sent   string
	}{
		{"GET fills the places, escaped", get, `{"user":"a b/c","day":"x&admin=1"}`, `{"ok":true}`, false, "GET /users/a%20b%2Fc/puzzles?day=x%26admin%3D1  Bearer t"},
		{"GET with a number", get, `{"user":"ann","day":7}`, `{"ok":true}`, false, "GET /users/ann/puzzles?day=7  Bearer t"},
		{"a missing argument", get, `{"user":"ann"}`, "puzzle needs day", true, ""},
		{"dot-dot refused", get, `{"user":"..","day":"1"}`, `puzzle: user may not be ".."`, true, ""},
		{"POST sends the arguments as JSON", post, `{"title":"t","n":2}`, `{"ok":true}`, false, `POST /items {"n":2,"title":"t"} `},
		{"a redirect is not followed", Config{Name: "m", Endpoint: srv.URL + "/moved", Method: "GET"}, `{}`, "HTTP 302: redirected to https://elsewhere.example/, not followed", true, "GET /moved  "},
		{"an HTTP error is an error result", Config{Name: "m", Endpoint: srv.URL + "/missing", Method: "GET"}, `{}`, "HTTP 404: no such puzzle", true, "GET /missing  "},
		{"a long body is cut", Config{Name: "m", Endpoint: srv.URL + "/big", Method: "GET"}, `{}`, "xxx", false, "GET /big  "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen = nil
			res, err := New(tt.cfg, nil, nil).Call(context.Background(), exec.ToolCall{ID: "c1", Name: tt.cfg.Name, Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Text, tt.result) || res.IsError != tt.isErr {
				t.Errorf("result %.200q (error %v), want %q (error %v)", res.Text, res.IsError, tt.result, tt.isErr)
			}
			if got := strings.Join(seen, "|"); got != tt.sent {
				t.Errorf("sent %q, want %q", got, tt.sent)
			}
			if strings.HasSuffix(tt.name, "cut") && !strings.HasSuffix(res.Text, "[the response was cut at 1048576 bytes]") {
				t.Errorf("no cut note")
			}
		})
	}
}

// A person approves the method and the exact URL a call sends; rules see
// url and method; "for this session" holds for the tool and the origin.
func TestApproval(t *testing.T) {
	tool := New(Config{Name: "puzzle", Endpoint: "https://api.example.com/p/${id}", Method: "GET"}, nil, nil)
	a, acts, err := tool.Approval(context.Background(), exec.ToolCall{Arguments: json.RawMessage(`{"id":"7 8"}`)})
	if err != nil || !acts {
		t.Fatalf("acts %v, err %v", acts, err)
	}
	if a.Show != "GET https://api.example.com/p/7%208" || a.Args["url"] != "https://api.example.com/p/7%208" || a.Args["method"] != "GET" || a.SessionKey != "api puzzle https://api.example.com" {
		t.Errorf("approval %+v", a)
	}
	post := New(Config{Name: "mk", Endpoint: "https://api.example.com/items", Method: "POST"}, nil, nil)
	a, _, _ = post.Approval(context.Background(), exec.ToolCall{Arguments: json.RawMessage(`{"t":1}`)})
	if a.Show != "POST https://api.example.com/items\n\n{\"t\":1}" {
		t.Errorf("show %q", a.Show)
	}
	if spec := tool.Spec(); string(spec.Parameters) != `{"properties":{},"required":[],"type":"object"}` {
		t.Errorf("parameters %s", spec.Parameters)
	}
}
