package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hitl-dev/hitl/internal/procgroup"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/mcp/mcptest"
	"github.com/hitl-dev/hitl/prompt"
)

var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcptest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin, err = mcptest.BuildInto(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// transport is one way of reaching the test server.
type transport struct {
	name   string
	server func(t *testing.T, legacy bool) (Server, *mcptest.HTTPServer)
}

var transports = []transport{
	{"stdio", func(t *testing.T, legacy bool) (Server, *mcptest.HTTPServer) {
		s := Server{Name: "test", Command: serverBin}
		if legacy {
			s.Args = []string{"-legacy"}
		}
		return s, nil
	}},
	{"streamable", func(t *testing.T, legacy bool) (Server, *mcptest.HTTPServer) {
		h := mcptest.NewHTTP(t, mcptest.Options{Legacy: legacy})
		return Server{Name: "test", URL: h.URL}, h
	}},
}

// each runs f over every transport, and for elicitation over both protocol
// styles (legacy: elicitation/create during the call; else an
// input-required result).
func each(t *testing.T, protocols bool, f func(t *testing.T, s Server)) {
	for _, tr := range transports {
		legacies := []bool{false}
		if protocols {
			legacies = []bool{false, true}
		}
		for _, legacy := range legacies {
			name := tr.name
			if legacy {
				name += "/2025-11-25"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				s, _ := tr.server(t, legacy)
				f(t, s)
			})
		}
	}
}

func start(t *testing.T, s Server, opts Options) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Start(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func tool(t *testing.T, c *Client, name string) *Tool {
	t.Helper()
	for _, tl := range c.Tools() {
		if tl.Spec().Name == name {
			return tl.(*Tool)
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func call(t *testing.T, c *Client, name, args string) (exec.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return tool(t, c, name).Call(ctx, exec.ToolCall{ID: "call_1", Name: name, Arguments: json.RawMessage(args)})
}

// asker answers questions with a function and records them.
type asker struct {
	mu     sync.Mutex
	asked  []prompt.Question
	answer func(q prompt.Question) (prompt.Answer, error)
}

func (a *asker) Ask(ctx context.Context, q prompt.Question) (prompt.Answer, error) {
	a.mu.Lock()
	a.asked = append(a.asked, q)
	a.mu.Unlock()
	return a.answer(q)
}

func (a *asker) questions() []prompt.Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]prompt.Question(nil), a.asked...)
}

func answer(action prompt.Action, content string) func(prompt.Question) (prompt.Answer, error) {
	return func(prompt.Question) (prompt.Answer, error) {
		a := prompt.Answer{Action: action, Source: prompt.SourceJSONL}
		if content != "" {
			a.Content = json.RawMessage(content)
		}
		return a, nil
	}
}

func TestToolsAndApproval(t *testing.T) {
	each(t, false, func(t *testing.T, s Server) {
		c := start(t, s, Options{})
		var names []string
		for _, tl := range c.Tools() {
			names = append(names, tl.Spec().Name)
			if _, ok := tl.(exec.Acting); !ok {
				t.Errorf("%s is not exec.Acting", tl.Spec().Name)
			}
		}
		want := "authorize_first choose_env configure crash delete_item echo login open_link provision raw read_status signin slow two_step"
		if got := strings.Join(names, " "); got != want {
			t.Errorf("tools = %s, want %s", got, want)
		}
		spec := tool(t, c, "delete_item").Spec()
		if spec.Description != "Delete an item for good." || !strings.Contains(string(spec.Parameters), `"id"`) {
			t.Errorf("spec = %+v", spec)
		}

		tests := []struct {
			tool, args string
			ok         bool
			show       string
		}{
			{"read_status", `{}`, false, ""},
			{"read_status", `{"x":"$HITL_SECRET_1"}`, true, "read_status"}, // a secret never runs unasked
			{"delete_item", `{"id":"42"}`, true, "MCP tool delete_item of server test, with the arguments:\n{\n  \"id\": \"42\"\n}"},
			{"echo", ``, true, "{}"},
		}
		for _, tt := range tests {
			a, ok, err := tool(t, c, tt.tool).Approval(context.Background(), exec.ToolCall{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil || ok != tt.ok {
				t.Errorf("%s %s: ok %v err %v, want ok %v", tt.tool, tt.args, ok, err, tt.ok)
				continue
			}
			if !ok {
				continue
			}
			if !strings.Contains(a.Show, tt.show) || a.Server != "test" || a.SessionKey != "mcp:test:"+tt.tool {
				t.Errorf("%s: approval %+v", tt.tool, a)
			}
			if secret := strings.Contains(tt.args, "HITL_SECRET_"); a.Secret != secret {
				t.Errorf("%s %s: Secret = %v, want %v (a call that sends a secret is asked every time)", tt.tool, tt.args, a.Secret, secret)
			}
		}
		if _, _, err := tool(t, c, "delete_item").Approval(context.Background(), exec.ToolCall{Arguments: json.RawMessage(`[1]`)}); err == nil {
			t.Error("arguments that are not an object: no error")
		}

		s.Tools = []string{"echo", "read_status"}
		c2 := start(t, s, Options{})
		if n := len(c2.Tools()); n != 2 {
			t.Errorf("filtered: %d tools", n)
		}
		s.Tools = []string{"nope"}
		_, err := Start(context.Background(), s, Options{})
		if err == nil || !strings.Contains(err.Error(), `"test"`) || !strings.Contains(err.Error(), `no tool "nope"`) {
			t.Errorf("unknown tool in filter: %v", err)
		}
	})
}

func TestCall(t *testing.T) {
	each(t, false, func(t *testing.T, s Server) {
		c := start(t, s, Options{})
		// A tool the server does not have: its refusal is for the model.
		gone := &Tool{c: c, spec: exec.ToolSpec{Name: "gone"}}
		res, err := gone.Call(context.Background(), exec.ToolCall{Arguments: json.RawMessage(`{}`)})
		if err != nil || !res.IsError || !strings.Contains(res.Text, "the MCP server test refused the call of gone") {
			t.Errorf("unknown tool: %+v %v", res, err)
		}
		tests := []struct {
			tool, args string
			text       string
			isError    bool
		}{
			{"read_status", `{}`, "status: ok", false},
			{"delete_item", `{"id":"42"}`, "deleted 42", false},
			{"delete_item", `{"id":""}`, "no such item", true},
			{"echo", `{"text":"hi"}`, "echo: hi\n[image: image/png, 4 bytes]", false},
			{"echo", `not json`, "invalid arguments", true},
		}
		for _, tt := range tests {
			res, err := call(t, c, tt.tool, tt.args)
			if err != nil {
				t.Errorf("%s %s: %v", tt.tool, tt.args, err)
				continue
			}
			if !strings.Contains(res.Text, tt.text) || res.IsError != tt.isError {
				t.Errorf("%s %s = %+v, want %q (error %v)", tt.tool, tt.args, res, tt.text, tt.isError)
			}
		}
	})
}

func TestSSE(t *testing.T) {
	h := mcptest.NewHTTP(t, mcptest.Options{})
	a := &asker{answer: answer(prompt.Accept, `"staging"`)}
	c := start(t, Server{Name: "sse", URL: h.SSE, Transport: TransportSSE}, Options{Asker: a})
	res, err := call(t, c, "read_status", `{}`)
	if err != nil || res.Text != "status: ok" {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = call(t, c, "choose_env", `{}`)
	if err != nil || res.Text != `{"action":"accept","content":{"env":"staging"}}` {
		t.Fatalf("%+v %v", res, err)
	}
}

const configureAnswer = `{"email":"ops@example.com","homepage":"https://example.com","start":"2026-01-02","at":"2026-01-02T03:04:05Z",` +
	`"name":"svc","ratio":0.25,"replicas":4,"verbose":true,"region":"us","tier":"pro","features":["traces","logs"]}`

func TestElicitForm(t *testing.T) {
	each(t, true, func(t *testing.T, s Server) {
		tests := []struct {
			name, tool string
			answer     func(prompt.Question) (prompt.Answer, error)
			want       string // result text; "" when the call must fail
			wantErr    string
		}{
			{"accept", "configure", answer(prompt.Accept, configureAnswer),
				`{"action":"accept","content":{"at":"2026-01-02T03:04:05Z","email":"ops@example.com","features":["traces","logs"],"homepage":"https://example.com","name":"svc","ratio":0.25,"region":"us","replicas":4,"start":"2026-01-02","tier":"pro","verbose":true}}`, ""},
			{"decline", "configure", answer(prompt.Decline, ""), `{"action":"decline","content":null}`, ""},
			{"cancel", "configure", answer(prompt.Cancel, ""), `{"action":"cancel","content":null}`, ""},
			{"single field asked as the field", "choose_env", answer(prompt.Accept, `"production"`), `{"action":"accept","content":{"env":"production"}}`, ""},
			{"out of bounds", "configure", answer(prompt.Accept, strings.Replace(configureAnswer, `"replicas":4`, `"replicas":11`, 1)), "", "does not fit the requested schema"},
			{"bad email", "configure", answer(prompt.Accept, strings.Replace(configureAnswer, `ops@example.com`, `nope`, 1)), "", "does not fit the requested schema"},
			{"unknown option", "choose_env", answer(prompt.Accept, `"moon"`), "", "does not fit the requested schema"},
			{"unanswered stops", "configure", func(q prompt.Question) (prompt.Answer, error) {
				return prompt.Answer{}, &prompt.StopError{Question: q, Reason: "end of input"}
			}, "", "input required"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := &asker{answer: tt.answer}
				c := start(t, s, Options{Asker: a})
				res, err := call(t, c, tt.tool, `{}`)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("got %+v, %v; want error %q", res, err, tt.wantErr)
					}
					if tt.name == "unanswered stops" {
						var stop *prompt.StopError
						if !errors.As(err, &stop) {
							t.Errorf("error %v is not a *prompt.StopError", err)
						}
					}
					return
				}
				if err != nil || res.Text != tt.want || res.IsError {
					t.Fatalf("got %+v, %v; want %s", res, err, tt.want)
				}
				qs := a.questions()
				if len(qs) != 1 {
					t.Fatalf("%d questions", len(qs))
				}
				q := qs[0]
				if q.Tool != tt.tool || q.CallID != "call_1" || q.Server != "test" {
					t.Errorf("question tool/call/server = %q %q %q", q.Tool, q.CallID, q.Server)
				}
				switch tt.tool {
				case "configure":
					if q.Kind != prompt.KindForm || len(q.Fields) != 11 || q.Message != "Configure the service" {
						t.Errorf("question %+v", q)
					}
				case "choose_env":
					if q.Kind != prompt.KindChoice || len(q.Options) != 2 || q.Message != "Which environment?" || q.Title != "Environment" {
						t.Errorf("question %+v", q)
					}
				}
			})
		}
	})
}

func TestElicitURL(t *testing.T) {
	each(t, true, func(t *testing.T, s Server) {
		tests := []struct {
			answer func(prompt.Question) (prompt.Answer, error)
			want   string
		}{
			{answer(prompt.Accept, `true`), "accept"},
			{answer(prompt.Accept, ``), "accept"},
			{answer(prompt.Accept, `false`), "decline"},
			{answer(prompt.Decline, ``), "decline"},
			{answer(prompt.Cancel, ``), "cancel"},
		}
		for _, tt := range tests {
			a := &asker{answer: tt.answer}
			c := start(t, s, Options{Asker: a})
			res, err := call(t, c, "open_link", `{}`)
			if err != nil || !strings.Contains(res.Text, `"action":"`+tt.want+`"`) {
				t.Errorf("want %s: got %+v, %v", tt.want, res, err)
				continue
			}
			q := a.questions()[0]
			if q.Kind != prompt.KindConfirm || !q.Consent.IsConsent() || q.Server != "test" || q.Tool != "open_link" {
				t.Errorf("question %+v", q)
			}
			if !strings.Contains(q.Message, `https://auth.example.com/authorize?state=x\x1b[31m`) || strings.Contains(q.Message, "\x1b") {
				t.Errorf("the URL is not shown escaped: %q", q.Message)
			}
		}
	})
}

func TestURLElicitationRequired(t *testing.T) {
	each(t, true, func(t *testing.T, s Server) {
		tests := []struct {
			name   string
			answer func(prompt.Question) (prompt.Answer, error)
			want   string
			isErr  bool
			err    bool
		}{
			{"opened: called again", answer(prompt.Accept, `true`), "authorized and done", false, false},
			{"declined: not called again", answer(prompt.Decline, ``), "needs a person to open an address before authorize_first can run", true, false},
			{"cancelled: not called again", answer(prompt.Cancel, ``), "they did not, so the call was not made", true, false},
			{"unanswered: the run stops", func(prompt.Question) (prompt.Answer, error) {
				return prompt.Answer{}, &prompt.StopError{}
			}, "", false, true},
		}
		for _, tt := range tests {
			a := &asker{answer: tt.answer}
			c := start(t, s, Options{Asker: a})
			res, err := call(t, c, "authorize_first", `{}`)
			if tt.err {
				var stop *prompt.StopError
				if !errors.As(err, &stop) {
					t.Errorf("%s: got %+v, %v; want the asker's error", tt.name, res, err)
				}
			} else if err != nil || res.IsError != tt.isErr || !strings.Contains(res.Text, tt.want) {
				t.Errorf("%s: got %+v, %v; want %q", tt.name, res, err, tt.want)
			}
			qs := a.questions()
			if len(qs) != 1 {
				t.Fatalf("%s: asked %d questions, want 1", tt.name, len(qs))
			}
			q := qs[0]
			if q.Kind != prompt.KindConfirm || !q.Consent.IsConsent() || q.Tool != "authorize_first" || q.Server != "test" ||
				!strings.Contains(q.Message, "Authorize the tracker") ||
				!strings.Contains(q.Message, `https://auth.example.com/first\x1b[2J`) || strings.Contains(q.Message, "\x1b") {
				t.Errorf("%s: question %+v", tt.name, q)
			}
		}
		// Nobody to ask: the server's refusal goes to the model.
		c := start(t, s, Options{})
		res, err := call(t, c, "authorize_first", `{}`)
		if err != nil || !res.IsError || !strings.Contains(res.Text, "URL elicitation required") {
			t.Errorf("without an asker: %+v, %v", res, err)
		}
	})
}

func TestTimeout(t *testing.T) {
	each(t, false, func(t *testing.T, s Server) {
		s.Timeout = 300 * time.Millisecond
		slowAsker := &asker{answer: func(q prompt.Question) (prompt.Answer, error) {
			time.Sleep(700 * time.Millisecond) // longer than the timeout
			return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"staging"`)}, nil
		}}
		c := start(t, s, Options{Asker: slowAsker})

		begin := time.Now()
		defer func() { t.Logf("took %s", time.Since(begin)) }()
		res, err := call(t, c, "slow", `{"ms":5000}`)
		if err != nil || !res.IsError || !strings.Contains(res.Text, "did not finish within its timeout (300ms") {
			t.Fatalf("slow: %+v %v", res, err)
		}
		if d := time.Since(begin); d > 3*time.Second {
			t.Errorf("the timeout took %s", d)
		}
		t.Logf("timeout after %s", time.Since(begin))
		// The server is still usable.
		if res, err := call(t, c, "slow", `{"ms":10}`); err != nil || res.Text != "slept 10 ms" {
			t.Fatalf("after a timeout: %+v %v", res, err)
		}
		// The clock stands still while a person is asked: 700 ms asking
		// plus 100 ms of work fit a 300 ms timeout.
		res, err = call(t, c, "choose_env", `{"after_ms":100}`)
		if err != nil || res.Text != `{"action":"accept","content":{"env":"staging"}}` {
			t.Fatalf("elicitation under a timeout: %+v %v", res, err)
		}
		t.Logf("elicitation done after %s", time.Since(begin))
		// ... but the work after the answer still counts.
		res, err = call(t, c, "choose_env", `{"after_ms":3000}`)
		if err != nil || !res.IsError || !strings.Contains(res.Text, "timeout") {
			t.Fatalf("slow work after the answer: %+v %v", res, err)
		}
	})
}

func TestCrash(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			s, _ := tr.server(t, false)
			c := start(t, s, Options{})
			res, err := call(t, c, "crash", `{}`)
			var se *ServerError
			if !errors.As(err, &se) {
				t.Fatalf("got %+v, %v; want a *ServerError", res, err)
			}
			if !strings.Contains(err.Error(), `mcp server "test" failed during a call of crash`) {
				t.Errorf("error %v", err)
			}
			if tr.name == "stdio" && (!strings.Contains(err.Error(), "mcptest: crashing on purpose") || !strings.Contains(err.Error(), "exit status 2")) {
				t.Errorf("no stderr tail or exit status: %v", err)
			}
			// Later calls fail the same way, promptly.
			if _, err := call(t, c, "read_status", `{}`); err == nil {
				t.Error("a call after the crash succeeded")
			}
		})
	}
}

func TestCannotStart(t *testing.T) {
	tests := []struct {
		name   string
		server Server
		want   []string
	}{
		{"no such command", Server{Command: "/nonexistent/tracker-mcp"}, []string{`mcp server "tracker-mcp" cannot start`, "no such file"}},
		{"exits before the handshake", Server{Name: "db", Command: serverBin, Args: []string{"-fail"}}, []string{`mcp server "db" cannot start`, "exit status 3", "cannot open the database: permission denied"}},
		{"no handshake", Server{Name: "mute", Command: serverBin, Args: []string{"-hang", "-stderr", "starting\x1b[2J"}}, []string{`mcp server "mute" cannot start: no handshake within 500ms`, `starting\x1b[2J`}},
		{"remote refused", Server{Name: "far", URL: "http://127.0.0.1:1/mcp"}, []string{`mcp server "far" cannot start`}},
		{"bad url", Server{URL: "ftp://x"}, []string{`expected an absolute http(s) URL`}},
		{"both", Server{Command: "x", URL: "http://x"}, []string{`not both`}},
		{"bad transport", Server{URL: "http://x", Transport: "ws"}, []string{`expected streamable or sse`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			begin := time.Now()
			c, err := Start(context.Background(), tt.server, Options{Handshake: 500 * time.Millisecond, Grace: 100 * time.Millisecond})
			if err == nil {
				c.Close()
				t.Fatal("started")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\x1b") {
				t.Errorf("stderr not escaped: %q", err)
			}
			if d := time.Since(begin); d > 5*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"server", nil},
		// A child that ignores SIGTERM and outlives the server.
		{"stubborn child", []string{"-c", `trap "" TERM; (trap "" TERM; sleep 300) & exec "$0"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Server{Command: serverBin}
			if tt.args != nil {
				s = Server{Command: "/bin/sh", Args: append(tt.args, serverBin)}
			}
			c := start(t, s, Options{Grace: 200 * time.Millisecond})
			pg := c.proc.cmd.Pid()
			if err := syscall.Kill(-pg, 0); err != nil {
				t.Fatalf("the process group is not there: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if procgroup.Alive(pg) {
				t.Errorf("process group %d still has processes after Close", pg)
			}
			if err := c.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	each(t, false, func(t *testing.T, s Server) {
		secrets := &prompt.Secrets{}
		p := secrets.Add("hunter2-horse")
		front := &asker{answer: answer(prompt.Accept, `{"user":"ann","password":"battery-staple"}`)}
		// The run's asker replaces secret answers by placeholders.
		a := &prompt.Asker{FrontEnd: front, Secrets: secrets, Unanswered: prompt.UnansweredStop}
		c := start(t, s, Options{Asker: a, Secrets: secrets})

		res, err := call(t, c, "echo", `{"text":"pw=`+p+`"}`)
		if err != nil || !strings.HasPrefix(res.Text, "echo: pw=***") {
			t.Errorf("echo: %+v %v", res, err)
		}
		// The server receives the secret field's value; the model sees
		// it masked.
		res, err = call(t, c, "login", `{}`)
		if err != nil || res.Text != `{"action":"accept","content":{"password":"***","user":"ann"}}` {
			t.Errorf("login: %+v %v", res, err)
		}
	})
}
