package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/remote"
	"github.com/hitl-dev/hitl/exec/tools/remote/remotetest"
	"github.com/hitl-dev/hitl/prompt"
)

// fakeAsker records the questions and answers them with answer.
type fakeAsker struct {
	mu        sync.Mutex
	questions []prompt.Question
	answer    func(q prompt.Question) (prompt.Answer, error)
}

func (a *fakeAsker) Ask(ctx context.Context, q prompt.Question) (prompt.Answer, error) {
	a.mu.Lock()
	a.questions = append(a.questions, q)
	a.mu.Unlock()
	if a.answer == nil {
		return prompt.Answer{}, errors.New("nothing should be asked")
	}
	return a.answer(q)
}

func (a *fakeAsker) asked() []prompt.Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]prompt.Question(nil), a.questions...)
}

func answer(action prompt.Action, content string, source prompt.Source) func(prompt.Question) (prompt.Answer, error) {
	return func(prompt.Question) (prompt.Answer, error) {
		a := prompt.Answer{Action: action, Source: source}
		if content != "" {
			a.Content = json.RawMessage(content)
		}
		return a, nil
	}
}

type env struct {
	tools  map[string]*remote.Tool
	server *remotetest.Server
	http   *httptest.Server
}

// setup serves remotetest on httptest and builds a toolset declaring the
// named tools; edit adjusts the toolset.
func setup(t *testing.T, asker prompt.Questioner, edit func(*config.Toolset), names ...string) *env {
	t.Helper()
	srv := remotetest.New()
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	ts := &config.Toolset{Type: "remote", URL: hs.URL + "/invoke"}
	for _, n := range names {
		ts.Tools = append(ts.Tools, config.RemoteTool{Name: n, Description: n})
	}
	if edit != nil {
		edit(ts)
	}
	cb := remote.NewServer()
	t.Cleanup(func() { cb.Close() })
	list, err := remote.New(ts, remote.Options{RunID: "run_1", Server: cb, Asker: asker, Secrets: &prompt.Secrets{}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{tools: map[string]*remote.Tool{}, server: srv, http: hs}
	for _, tool := range list {
		e.tools[tool.Spec().Name] = tool
	}
	return e
}

func (e *env) call(t *testing.T, name, args string) exec.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := e.tools[name].Call(ctx, exec.ToolCall{ID: "call_1", Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	return res
}

func TestUserChoice(t *testing.T) {
	tests := []struct {
		name     string
		answer   func(prompt.Question) (prompt.Answer, error)
		selected int // -1: nothing sent
		result   string
		isError  bool
	}{
		{"chosen", answer(prompt.Accept, `"Yes once"`, prompt.SourceJSONL), 1, `choice 1 "Yes once": write of 5 bytes to notes.txt allowed`, false},
		{"chosen for session", answer(prompt.Accept, `"Yes for session"`, prompt.SourceTTY), 0, `choice 0 "Yes for session"`, false},
		{"chosen no", answer(prompt.Accept, `"No"`, prompt.SourceAnswers), 2, `choice 2 "No": write to notes.txt declined`, false},
		{"declined: the default", answer(prompt.Decline, "", prompt.SourceJSONL), 2, `choice 2 "No"`, false},
		{"dismissed: the default", answer(prompt.Cancel, "", prompt.SourceTTY), 2, `choice 2 "No"`, false},
		{"end of input: nothing sent", answer(prompt.Cancel, "", prompt.SourceEOF), -1, "nobody was available to answer (end of input)", true},
		{"no front end: nothing sent", answer(prompt.Cancel, "", prompt.SourcePolicy), -1, "nobody was available", true},
		{"prompt timeout: nothing sent", answer(prompt.Cancel, "", prompt.SourceTimeout), -1, "nobody was available", true},
		{"unknown option: nothing sent", answer(prompt.Accept, `"Maybe"`, prompt.SourceJSONL), -1, "names none of its choices", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &fakeAsker{answer: tt.answer}
			e := setup(t, asker, nil, "write_file")
			res := e.call(t, "write_file", `{"path":"notes.txt","content":"hello"}`)
			if !strings.Contains(res.Text, tt.result) || res.IsError != tt.isError {
				t.Errorf("result = %+v, want %q (is_error %v)", res, tt.result, tt.isError)
			}
			sels := e.server.Selections()
			if tt.selected < 0 {
				if len(sels) != 0 {
					t.Errorf("selections sent: %+v, want none", sels)
				}
			} else if len(sels) != 1 || sels[0] != (remote.Selection{ID: "call_1", Selected: tt.selected}) {
				t.Errorf("selections = %+v, want one selecting %d", sels, tt.selected)
			}
			qs := asker.asked()
			if len(qs) != 1 {
				t.Fatalf("asked %d questions, want 1", len(qs))
			}
			q := qs[0]
			if q.Kind != prompt.KindChoice || q.Message != "Allow writing to the original directory?" ||
				string(q.Default) != `"No"` || q.Consent != prompt.ConsentChoice || q.Tool != "write_file" || q.CallID != "call_1" {
				t.Errorf("question = %+v", q)
			}
			var labels []string
			for _, o := range q.Options {
				labels = append(labels, o.ID+"="+o.Label)
			}
			if got := strings.Join(labels, ","); got != "Yes for session=Yes for session,Yes once=Yes once,No=No" {
				t.Errorf("options = %s", got)
			}
		})
	}
}

// The invocation carries the run id, the model's call id, a call_id and a
// callback URL; it is sent once, never retried.
func TestInvocation(t *testing.T) {
	e := setup(t, &fakeAsker{}, nil, "echo", "refuse")
	res := e.call(t, "echo", `{"x":1}`)
	if res.IsError || res.Text != `{"x":1}` {
		t.Errorf("result = %+v", res)
	}
	res = e.call(t, "refuse", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "did not acknowledge") || !strings.Contains(res.Text, "500") || !strings.Contains(res.Text, "down for maintenance") {
		t.Errorf("refused: result = %+v", res)
	}
	invs := e.server.Invocations()
	if len(invs) != 2 {
		t.Fatalf("invocations = %d, want 2 (no retry)", len(invs))
	}
	inv := invs[0]
	if inv.Type != "tool_call" || inv.GroupID != "run_1" || inv.ID != "call_1" || inv.Name != "echo" ||
		!strings.HasPrefix(inv.CallID, "hitl_") || !strings.HasPrefix(inv.CallbackURL, "http://127.0.0.1:") {
		t.Errorf("invocation = %+v", inv)
	}
	if invs[1].CallID == inv.CallID {
		t.Errorf("two invocations share call_id %s", inv.CallID)
	}
}

func TestSecretsAndHeaders(t *testing.T) {
	var mu sync.Mutex
	var gotAuth string
	srv := remotetest.New()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth = r.Header.Get("Authorization")
		mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.Close(); srv.Close() })
	secrets := &prompt.Secrets{}
	ph := secrets.Add(`pa"ss\word`)
	cb := remote.NewServer()
	defer cb.Close()
	list, err := remote.New(&config.Toolset{
		Type: "remote", URL: hs.URL + "/invoke",
		Tools:   []config.RemoteTool{{Name: "echo"}},
		Headers: map[string]string{"Authorization": "Bearer t0k"},
	}, remote.Options{RunID: "r", Server: cb, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	res, err := list[0].Call(context.Background(), exec.ToolCall{ID: "c", Name: "echo", Arguments: json.RawMessage(`{"password":"` + ph + `","n":12345678901234567890}`)})
	if err != nil {
		t.Fatal(err)
	}
	args := string(e0(srv).Arguments)
	if !json.Valid([]byte(args)) || !strings.Contains(args, `"pa\"ss\\word"`) || !strings.Contains(args, "12345678901234567890") {
		t.Errorf("arguments sent = %s", args)
	}
	if strings.Contains(res.Text, "pa\\\"ss") || !strings.Contains(res.Text, "***") {
		t.Errorf("the secret reached the result: %s", res.Text)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotAuth != "Bearer t0k" {
		t.Errorf("Authorization = %q", gotAuth)
	}
}

func e0(s *remotetest.Server) remote.Invocation {
	invs := s.Invocations()
	if len(invs) == 0 {
		return remote.Invocation{}
	}
	return invs[0]
}

// Bad user_choice messages get a 4xx naming the rule; nothing is asked and
// the call stays pending (the tool's tool_result still completes it).
func TestBadUserChoice(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"default out of range", `{"set":{"default":5}}`, `422 {"error":"user_choice: default 5 is not a valid index into choices (0..1)","rule":"default MUST be a valid index"}`},
		{"default negative", `{"set":{"default":-1}}`, "default MUST be a valid index"},
		{"default not integer", `{"set":{"default":0.5}}`, "default MUST be a valid index"},
		{"default missing", `{"drop":["default"]}`, "default is missing"},
		{"no choices", `{"set":{"choices":[]}}`, "choices MUST contain at least one element"},
		{"choices missing", `{"drop":["choices"]}`, "choices MUST contain at least one element"},
		{"blank label", `{"set":{"choices":["a"," "]}}`, "choice labels MUST be human-readable"},
		{"unknown id", `{"set":{"id":"nope"}}`, `404 {"error":"user_choice: no pending call has id \"nope\"`},
		{"wrong group", `{"set":{"group_id":"other"}}`, "group_id MUST match the group_id from the original invocation"},
		{"call_id not echoed", `{"set":{"call_id":null}}`, "call_id, it MUST be echoed"},
		{"call_id wrong", `{"set":{"call_id":"hitl_0"}}`, "call_id, it MUST be echoed"},
		{"no prompt", `{"drop":["prompt"]}`, "prompt is missing"},
		{"no response_url", `{"drop":["response_url"]}`, "response_url is missing"},
		{"relative response_url", `{"set":{"response_url":"/choice"}}`, "not an absolute http(s) URL"},
		{"unknown type", `{"set":{"type":"user_choise"}}`, `400 {"error":"unknown type \"user_choise\"","rule":"type MUST be \"tool_result\" or \"user_choice\""}`},
		{"choices not strings", `{"set":{"choices":[1,2]}}`, "400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &fakeAsker{}
			e := setup(t, asker, nil, "bad_choice")
			res := e.call(t, "bad_choice", tt.args)
			if res.IsError || !strings.Contains(res.Text, tt.want) {
				t.Errorf("result = %+v, want it to contain %s", res, tt.want)
			}
			if n := len(asker.asked()); n != 0 {
				t.Errorf("asked %d questions", n)
			}
		})
	}
}

func TestResponseURLNotAllowed(t *testing.T) {
	asker := &fakeAsker{}
	e := setup(t, asker, nil, "foreign_response")
	res := e.call(t, "foreign_response", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "response_url (http://tools.example.invalid/choice/x) is not allowed") {
		t.Errorf("result = %+v", res)
	}
	if n := len(asker.asked()); n != 0 {
		t.Errorf("asked %d questions", n)
	}
	if s := e.server.Selections(); len(s) != 0 {
		t.Errorf("selections = %+v", s)
	}
}

func TestTimeout(t *testing.T) {
	e := setup(t, &fakeAsker{}, func(ts *config.Toolset) { ts.Timeout = 300 * time.Millisecond }, "silent")
	start := time.Now()
	res := e.call(t, "silent", `{}`)
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("took %s, want about 300ms", d)
	}
	if !res.IsError || !strings.Contains(res.Text, "no tool_result within the toolset's timeout (300ms)") {
		t.Errorf("result = %+v", res)
	}
}

// The timeout does not run while a person is being asked.
func TestTimeoutPausedWhileAsking(t *testing.T) {
	asker := &fakeAsker{answer: func(prompt.Question) (prompt.Answer, error) {
		time.Sleep(600 * time.Millisecond)
		return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"Yes once"`), Source: prompt.SourceTTY}, nil
	}}
	e := setup(t, asker, func(ts *config.Toolset) { ts.Timeout = 400 * time.Millisecond }, "write_file")
	res := e.call(t, "write_file", `{"path":"a","content":""}`)
	if res.IsError || !strings.Contains(res.Text, `choice 1 "Yes once"`) {
		t.Errorf("result = %+v", res)
	}
}

// Every user_choice is asked; nothing is cached or replayed.
func TestAskedEachTime(t *testing.T) {
	asker := &fakeAsker{answer: func(q prompt.Question) (prompt.Answer, error) {
		return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`0`), Source: prompt.SourceJSONL}, nil
	}}
	asker.answer = func(q prompt.Question) (prompt.Answer, error) {
		c, _ := json.Marshal(q.Options[0].ID)
		return prompt.Answer{Action: prompt.Accept, Content: c, Source: prompt.SourceJSONL}, nil
	}
	e := setup(t, asker, nil, "ask_twice")
	res := e.call(t, "ask_twice", `{}`)
	if res.IsError || res.Text != "first 0, second 0" {
		t.Errorf("result = %+v", res)
	}
	res = e.call(t, "ask_twice", `{}`)
	if res.IsError || res.Text != "first 0, second 0" {
		t.Errorf("second call: result = %+v", res)
	}
	if n := len(asker.asked()); n != 4 {
		t.Errorf("asked %d questions, want 4", n)
	}
	if n := len(e.server.Selections()); n != 4 {
		t.Errorf("sent %d selections, want 4", n)
	}
}

func TestEarlyResult(t *testing.T) {
	e := setup(t, &fakeAsker{}, nil, "early_result")
	res := e.call(t, "early_result", `{}`)
	if res.IsError || res.Text != "done before the acknowledgement" {
		t.Errorf("result = %+v", res)
	}
}

// Errors from the Asker stop the run: they are the Call's error.
func TestAskerErrorStops(t *testing.T) {
	for _, want := range []error{prompt.ErrInterrupted, &prompt.BadAnswerError{Where: "answer line 1", Reason: "bad"}} {
		asker := &fakeAsker{answer: func(prompt.Question) (prompt.Answer, error) { return prompt.Answer{}, want }}
		e := setup(t, asker, nil, "write_file")
		_, err := e.tools["write_file"].Call(context.Background(), exec.ToolCall{ID: "c", Name: "write_file", Arguments: json.RawMessage(`{}`)})
		if !errors.Is(err, want) {
			t.Errorf("err = %v, want %v", err, want)
		}
	}
}

func TestContextEndsCall(t *testing.T) {
	e := setup(t, &fakeAsker{}, nil, "silent")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := e.tools["silent"].Call(ctx, exec.ToolCall{ID: "c", Name: "silent", Arguments: json.RawMessage(`{}`)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	cb := remote.NewServer()
	defer cb.Close()
	list, err := remote.New(&config.Toolset{Type: "remote", URL: url + "/invoke", Tools: []config.RemoteTool{{Name: "t"}}}, remote.Options{Server: cb})
	if err != nil {
		t.Fatal(err)
	}
	res, err := list[0].Call(context.Background(), exec.ToolCall{ID: "c", Name: "t", Arguments: json.RawMessage(`{}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Text, "did not acknowledge") || !strings.Contains(res.Text, "connection refused") {
		t.Errorf("res = %+v, err = %v", res, err)
	}
}

func TestNewRejectsBadURL(t *testing.T) {
	for _, u := range []string{"localhost:8080/invoke", "ftp://x/y", "/invoke"} {
		_, err := remote.New(&config.Toolset{Type: "remote", URL: u}, remote.Options{Server: remote.NewServer()})
		if err == nil || !strings.Contains(err.Error(), "absolute http(s) URL") {
			t.Errorf("%s: err = %v", u, err)
		}
	}
}
