package remote

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/prompt"
)

func TestOptionIDs(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"Yes for session", "Yes once", "No"}, []string{"Yes for session", "Yes once", "No"}},
		{[]string{"Yes", "Yes", "No"}, []string{"Yes #0", "Yes #1", "No"}},
		{[]string{"a", "a", "a #1"}, []string{"a #0", "a #1'", "a #1"}},
	}
	for _, tt := range tests {
		if got := optionIDs(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("optionIDs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestResponseAllowed(t *testing.T) {
	tool, _ := url.Parse("http://tools.internal:9000/invoke")
	allow := []string{"choices.internal", "other.internal:8443"}
	tests := []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:5000/r", true},
		{"http://127.8.9.1/r", true},
		{"http://[::1]:5000/r", true},
		{"http://localhost:5000/r", true},
		{"http://LOCALHOST/r", true},
		{"http://tools.internal:1234/r", true}, // the host of url, any port
		{"http://choices.internal/r", true},
		{"https://choices.internal:8443/r", true},
		{"https://other.internal:8443/r", true},
		{"https://other.internal/r", false}, // allowed on 8443 only
		{"http://evil.example/r", false},
		{"http://localhost.evil.example/r", false},
		{"http://10.0.0.1/r", false},
		{"http://0.0.0.0/r", false},
	}
	for _, tt := range tests {
		u, _ := url.Parse(tt.url)
		if got := responseAllowed(u, tool, allow); got != tt.want {
			t.Errorf("responseAllowed(%s) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

func TestCallbackServerPaths(t *testing.T) {
	s := NewServer()
	defer s.Close()
	base, err := s.callbackURL("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.callbackURL("127.0.0.1"); again != base {
		t.Errorf("a second listener: %s, %s", base, again)
	}
	u, _ := url.Parse(base)
	token := strings.TrimPrefix(u.Path, "/hitl/")
	if len(token) != 32 {
		t.Errorf("token %q: want 32 hex digits", token)
	}
	tests := []struct {
		method, url, body string
		status            int
	}{
		{"POST", base, `{"type":"tool_result","group_id":"g","id":"x","text":"t"}`, 404}, // no such call
		{"POST", strings.TrimSuffix(base, token) + "0123", `{}`, 404},
		{"POST", base + "/more", `{}`, 404},
		{"POST", u.Scheme + "://" + u.Host + "/", `{}`, 404},
		{"GET", base, ``, 405},
		{"POST", base, `not json`, 400},
		{"POST", base, `{"type":"tool_result"}`, 422},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, tt.url, strings.NewReader(tt.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s %s: status %d, want %d", tt.method, tt.url, tt.body, resp.StatusCode, tt.status)
		}
	}
	s.Close()
	if _, err := s.callbackURL("127.0.0.1"); err == nil {
		t.Error("callbackURL after Close: no error")
	}
}

type answerAsker struct{ content string }

func (a answerAsker) Ask(ctx context.Context, q prompt.Question) (prompt.Answer, error) {
	return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(a.content), Source: prompt.SourceJSONL}, nil
}

// Repeated labels get unique ids, and the chosen id maps back to its index.
func TestRepeatedLabels(t *testing.T) {
	got := make(chan Selection, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sel Selection
		_ = json.NewDecoder(r.Body).Decode(&sel)
		got <- sel
	}))
	defer hs.Close()
	tools, err := New(&config.Toolset{URL: hs.URL, Tools: []config.RemoteTool{{Name: "t"}}}, Options{Server: NewServer(), Asker: answerAsker{`"Yes #1"`}})
	if err != nil {
		t.Fatal(err)
	}
	p := &pending{id: "c", done: make(chan outcome, 1)}
	res, err := tools[0].choose(context.Background(), p, UserChoice{Prompt: "?", Choices: []string{"Yes", "Yes", "No"}, Default: 2, ResponseURL: hs.URL + "/r"})
	if err != nil || res.end != nil || res.undelivered != nil {
		t.Fatalf("choose = %+v, %v", res, err)
	}
	if sel := <-got; sel != (Selection{ID: "c", Selected: 1}) {
		t.Errorf("selection = %+v", sel)
	}
}
