package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/mcp/mcptest"
	"github.com/hitl-dev/hitl/prompt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// roundServer is the test server of a multi-round test: a stdio server
// counting in a file (each start of the server is a new process, as a
// resumed run's), or one streamable HTTP server for the whole test.
type roundServer struct {
	name string
	// server returns how to start the server for each run of a test:
	// forgetful, a run's server refuses the states of an earlier run's.
	server func(t *testing.T, legacy, forgetful bool) func() Server
}

var roundServers = []roundServer{
	{"stdio", func(t *testing.T, legacy, forgetful bool) func() Server {
		count := filepath.Join(t.TempDir(), "count")
		return func() Server {
			s := Server{Name: "test", Command: serverBin, Args: []string{"-count", count}}
			if legacy {
				s.Args = append(s.Args, "-legacy")
			}
			if forgetful {
				s.Args = append(s.Args, "-forgetful")
			}
			return s
		}
	}},
	{"streamable", func(t *testing.T, legacy, forgetful bool) func() Server {
		if legacy {
			h := mcptest.NewHTTP(t, mcptest.Options{Legacy: true})
			return func() Server { return Server{Name: "test", URL: h.URL} }
		}
		// Only a stateless endpoint speaks 2026-07-28. A forgetful
		// server is a new one for each run, counting in one file.
		count := filepath.Join(t.TempDir(), "count")
		h := mcptest.NewHTTP(t, mcptest.Options{CountFile: count, Forgetful: forgetful})
		return func() Server {
			if forgetful {
				h = mcptest.NewHTTP(t, mcptest.Options{CountFile: count, Forgetful: true})
			}
			return Server{Name: "test", URL: h.Stateless}
		}
	}},
}

// byMessage is a front end that answers the questions whose message it
// has an answer for; nobody answers the others.
type byMessage struct {
	mu      sync.Mutex
	answers map[string]string
	asked   []prompt.Question
}

func (f *byMessage) Ask(ctx context.Context, q prompt.Question) (prompt.Answer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, q)
	if a, ok := f.answers[q.Message]; ok {
		return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(a), Source: prompt.SourceJSONL}, nil
	}
	return prompt.Answer{}, &prompt.UnansweredError{Source: prompt.SourceEOF, Reason: "end of input"}
}

// keeper is the run's side of Options.Keep and Options.Kept.
type keeper struct {
	mu     sync.Mutex
	states map[string]json.RawMessage
	calls  int
}

func (k *keeper) keep(callID string, state json.RawMessage) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls++
	if state == nil {
		delete(k.states, callID)
		return
	}
	k.states[callID] = state
}

// run is one run's part of a test: a client with its own asker (numbering
// its questions from next, as a resumed run does), keeping states in k.
func run(t *testing.T, s Server, k *keeper, answers map[string]string, next int) (*Client, *byMessage, *prompt.Asker, *[]string) {
	front := &byMessage{answers: answers}
	secrets := &prompt.Secrets{}
	a := &prompt.Asker{FrontEnd: front, Unanswered: prompt.UnansweredStop, Secrets: secrets}
	a.SetNext(next)
	var notices []string
	k.mu.Lock()
	kept := map[string]json.RawMessage{}
	for id, st := range k.states {
		kept[id] = st
	}
	k.mu.Unlock()
	c := start(t, s, Options{Asker: a, Secrets: secrets, Kept: kept, Keep: k.keep, Notice: func(m string) { notices = append(notices, m) }})
	return c, front, a, &notices
}

func callID(t *testing.T, c *Client, name, id, args string) (exec.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return tool(t, c, name).Call(ctx, exec.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)})
}

// A call stopped while its server waits for input keeps the server's
// request state; the resumed run continues the call from it, asking the
// question again under its id, and the tool's first phase does not run
// again. Over protocol 2025-11-25 nothing is kept and the tool is called
// again.
func TestRoundsResumeFromKeptState(t *testing.T) {
	for _, rs := range roundServers {
		for _, legacy := range []bool{false, true} {
			name := rs.name
			if legacy {
				name += "/2025-11-25"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				server := rs.server(t, legacy, false)
				k := &keeper{states: map[string]json.RawMessage{}}

				c, _, _, _ := run(t, server(), k, nil, 0)
				_, err := callID(t, c, "provision", "call_7", `{"name":"web-1"}`)
				var stop *prompt.StopError
				if !errors.As(err, &stop) || stop.Question.ID != "p1" {
					t.Fatalf("err = %v, want a stop at p1", err)
				}
				c.Close()
				if legacy {
					if len(k.states) != 0 {
						t.Fatalf("a 2025-11-25 call kept %s", k.states)
					}
				} else {
					var got kept
					if err := json.Unmarshal(k.states["call_7"], &got); err != nil {
						t.Fatalf("kept %s: %v", k.states["call_7"], err)
					}
					if got.Server != "test" || got.Tool != "provision" || got.RequestState == "" || got.PromptIDs["region"] != "p1" || len(got.Requests) != 1 {
						t.Fatalf("kept %+v", got)
					}
				}

				// The resumed run (its question counter restarts below
				// the call's questions: an approval would be p1 again).
				c, front, a, notices := run(t, server(), k, map[string]string{"Where should web-1 go?": `"us"`}, 0)
				res, err := callID(t, c, "provision", "call_7", `{"name":"web-1"}`)
				if err != nil {
					t.Fatal(err)
				}
				want := "reserved web-1 (first phase 1); placed in us (first phase ran 1 time(s))"
				if legacy {
					want = "reserved web-1 (first phase 2); placed in us (first phase ran 2 time(s))"
				}
				if res.Text != want {
					t.Errorf("result %q, want %q", res.Text, want)
				}
				if len(front.asked) != 1 || front.asked[0].ID != "p1" || front.asked[0].CallID != "call_7" {
					t.Errorf("asked %+v, want the region again as p1", front.asked)
				}
				if a.Next() != 1 {
					t.Errorf("next question number %d, want 1", a.Next())
				}
				if len(*notices) != 0 {
					t.Errorf("notices %q", *notices)
				}
			})
		}
	}
}

// A server that no longer accepts the kept state gets the call afresh, and
// a person is told; the kept state is forgotten, and the same question is
// not asked twice.
func TestRoundsRejectedStateCallsAgain(t *testing.T) {
	for _, rs := range roundServers {
		t.Run(rs.name, func(t *testing.T) {
			t.Parallel()
			server := rs.server(t, false, true)
			k := &keeper{states: map[string]json.RawMessage{}}
			c, _, _, _ := run(t, server(), k, nil, 0)
			if _, err := callID(t, c, "provision", "call_1", `{"name":"db"}`); !errors.As(err, new(*prompt.StopError)) {
				t.Fatalf("err = %v, want a stop", err)
			}
			c.Close()

			c, front, _, notices := run(t, server(), k, map[string]string{"Where should db go?": `"eu"`}, 0)
			res, err := callID(t, c, "provision", "call_1", `{"name":"db"}`)
			if err != nil {
				t.Fatal(err)
			}
			// The kept question is asked (the state is tried with its
			// answer); the fresh call's same question takes that answer.
			if len(front.asked) != 1 || front.asked[0].ID != "p1" {
				t.Errorf("asked %+v, want the region once, as p1", front.asked)
			}
			if !strings.Contains(res.Text, "(first phase ran 2 time(s))") {
				t.Errorf("result %q: the first phase did not run again", res.Text)
			}
			if len(*notices) != 1 || !strings.Contains((*notices)[0], "did not accept the state of the call of provision") ||
				!strings.Contains((*notices)[0], "unknown or expired requestState") {
				t.Errorf("notices %q", *notices)
			}
			if _, ok := k.states["call_1"]; ok {
				t.Error("the rejected state is still kept")
			}
		})
	}
}

// A form with a secret field answered before the stop is not kept (nor is
// its value anywhere in the state): it is asked again on resume, under its
// id; the other answers of the round are kept.
func TestRoundsKeepNoSecret(t *testing.T) {
	for _, rs := range roundServers {
		t.Run(rs.name, func(t *testing.T) {
			t.Parallel()
			server := rs.server(t, false, false)
			k := &keeper{states: map[string]json.RawMessage{}}
			c, _, _, _ := run(t, server(), k, map[string]string{"Sign in": `{"user":"ann","password":"battery-staple"}`}, 0)
			_, err := callID(t, c, "signin", "call_1", `{}`)
			var stop *prompt.StopError
			if !errors.As(err, &stop) || stop.Question.ID != "p2" {
				t.Fatalf("err = %v, want a stop at p2", err)
			}
			c.Close()
			state := string(k.states["call_1"])
			if strings.Contains(state, "battery-staple") || strings.Contains(state, "ann") {
				t.Fatalf("the kept state holds the credentials: %s", state)
			}
			var got kept
			_ = json.Unmarshal(k.states["call_1"], &got)
			if len(got.Responses) != 0 || got.PromptIDs["credentials"] != "p1" || got.PromptIDs["target"] != "p2" {
				t.Fatalf("kept %+v", got)
			}

			c, front, _, _ := run(t, server(), k, map[string]string{
				"Sign in": `{"user":"ann","password":"battery-staple"}`, "Which environment?": `"production"`,
			}, 0)
			res, err := callID(t, c, "signin", "call_1", `{}`)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "signed in as ann to production with a password of 14 characters (first phase ran 1 time(s))" {
				t.Errorf("result %q", res.Text)
			}
			if len(front.asked) != 2 || front.asked[0].ID != "p1" || front.asked[1].ID != "p2" {
				t.Errorf("asked %+v, want the credentials (p1) and the target (p2) again", front.asked)
			}
		})
	}
}

// The non-secret answers of a round are kept and not asked again.
func TestRoundsKeepAnswersGiven(t *testing.T) {
	server := roundServers[0].server(t, false, false)
	k := &keeper{states: map[string]json.RawMessage{}}
	// A round of one question answered, then a stop elsewhere: simulated by
	// keeping a round whose target was answered.
	c, _, _, _ := run(t, server(), k, nil, 0)
	if _, err := callID(t, c, "signin", "call_1", `{}`); !errors.As(err, new(*prompt.StopError)) {
		t.Fatalf("err = %v, want a stop", err)
	}
	c.Close()
	var got kept
	_ = json.Unmarshal(k.states["call_1"], &got)
	got.Responses = map[string]*sdk.ElicitResult{"target": {Action: "accept", Content: map[string]any{"env": "staging"}}}
	k.states["call_1"], _ = json.Marshal(got)

	c, front, _, _ := run(t, server(), k, map[string]string{"Sign in": `{"user":"bo","password":"pw"}`}, 0)
	res, err := callID(t, c, "signin", "call_1", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "signed in as bo to staging with a password of 2 characters (first phase ran 1 time(s))" {
		t.Errorf("result %q", res.Text)
	}
	if len(front.asked) != 1 || front.asked[0].Message != "Sign in" {
		t.Errorf("asked %+v, want only the credentials", front.asked)
	}
}

// A state that holds a secret value (a server echoing one, JSON-escaped
// or not) is not kept: the resumed run calls the tool again.
func TestRoundsStateWithSecretNotKept(t *testing.T) {
	server := roundServers[1].server(t, false, false)
	for _, secret := range []string{"web-secret-9", `we"b\sec<ret>`} {
		t.Run(secret, func(t *testing.T) {
			k := &keeper{states: map[string]json.RawMessage{"call_1": json.RawMessage(`{"old":true}`)}}
			secrets := &prompt.Secrets{}
			p := secrets.Add(secret)
			a := &prompt.Asker{FrontEnd: &byMessage{}, Unanswered: prompt.UnansweredStop, Secrets: secrets}
			var notices []string
			c := start(t, server(), Options{Asker: a, Secrets: secrets, Keep: k.keep, Notice: func(m string) { notices = append(notices, m) }})
			if _, err := callID(t, c, "provision", "call_1", `{"name":"`+p+`"}`); !errors.As(err, new(*prompt.StopError)) {
				t.Fatalf("err = %v, want a stop", err)
			}
			if _, ok := k.states["call_1"]; ok || k.calls != 1 {
				t.Errorf("states %s (%d calls of Keep), want the call's state forgotten", k.states, k.calls)
			}
			if len(notices) != 1 || !strings.Contains(notices[0], "holds a secret value") || strings.Contains(notices[0], secret) {
				t.Errorf("notices %q", notices)
			}
		})
	}
}

// What a call keeps is bounded: a state too large for the session, or one
// that is not JSON, is not kept.
func TestKeepRoundBounds(t *testing.T) {
	tests := []struct {
		name  string
		state string
		kept  bool
	}{
		{"small", "abc", true},
		{"too large", strings.Repeat("x", maxKept), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &keeper{states: map[string]json.RawMessage{}}
			var notices []string
			c := &Client{name: "s", opts: Options{Keep: k.keep, Notice: func(m string) { notices = append(notices, m) }}}
			st := &callState{tool: "t", callID: "c1"}
			c.keepRound(st, &kept{Server: "s", Tool: "t", RequestState: tt.state, Requests: sdk.InputRequestMap{"a": &sdk.ElicitParams{Message: "?"}}})
			if _, ok := k.states["c1"]; ok != tt.kept || k.calls != 1 {
				t.Errorf("kept %v (%d calls), want %v", ok, k.calls, tt.kept)
			}
			if !tt.kept && (len(notices) != 1 || !strings.Contains(notices[0], "larger than")) {
				t.Errorf("notices %q", notices)
			}
		})
	}
}

// A kept state continues the one call it was kept for, once: when the
// resumed call is done the session forgets it, and a later call that comes
// with the same call id (a provider that reuses ids, a model replaying one)
// is a fresh call of its own, never handed the earlier call's state and
// answers.
func TestRoundsKeptStateContinuesOneCallOnly(t *testing.T) {
	server := roundServers[0].server(t, false, false)
	k := &keeper{states: map[string]json.RawMessage{}}
	c, _, _, _ := run(t, server(), k, nil, 0)
	if _, err := callID(t, c, "provision", "call_7", `{"name":"web-1"}`); !errors.As(err, new(*prompt.StopError)) {
		t.Fatalf("err = %v, want a stop", err)
	}
	c.Close()

	c, front, _, _ := run(t, server(), k, map[string]string{
		"Where should web-1 go?": `"us"`, "Where should db-9 go?": `"eu"`,
	}, 0)
	res, err := callID(t, c, "provision", "call_7", `{"name":"web-1"}`)
	if err != nil || res.Text != "reserved web-1 (first phase 1); placed in us (first phase ran 1 time(s))" {
		t.Fatalf("resumed call: %q, %v", res.Text, err)
	}
	if _, ok := k.states["call_7"]; ok {
		t.Errorf("the state of the finished call is still kept: %s", k.states["call_7"])
	}
	res, err = callID(t, c, "provision", "call_7", `{"name":"db-9"}`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "reserved db-9 (first phase 2); placed in eu (first phase ran 2 time(s))" {
		t.Errorf("a later call with the same id: %q, want a fresh call of db-9", res.Text)
	}
	if len(front.asked) != 2 || front.asked[1].Message != "Where should db-9 go?" {
		t.Errorf("asked %+v", front.asked)
	}
}
