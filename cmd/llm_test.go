package cmd_test

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/hitl-dev/hitl/internal/fakellm"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdLLM runs a local fake model API for the script (internal/fakellm):
//
//	llm openai|anthropic|google|responses|any REPLIES.json
//	                                    start it with the scripted replies (a JSON
//	                                    array of fakellm.Reply) in that wire format
//	                                    (any: as each request's path names it);
//	                                    $LLM_URL is its URL
//	llm requests FILE                   write the requests it got, one JSON line each
//	llm system FILE                     write the system message of the first
//	                                    OpenAI request it got (for cmp)
//	llm stop                            stop it (the next requests fail)
func cmdLLM(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: llm openai|anthropic|google|responses|any REPLIES.json | llm requests FILE | llm system FILE | llm stop")
	}
	h, _ := ts.Value(llmKey{}).(*llmHolder)
	if h == nil {
		ts.Fatalf("llm: Setup did not call setupLLM")
	}
	srv := h.srv
	switch args[0] {
	case "openai", "anthropic", "google", "responses", "any":
		if len(args) != 2 {
			ts.Fatalf("usage: llm %s REPLIES.json", args[0])
		}
		var replies []fakellm.Reply
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &replies))
		format := map[string]fakellm.Format{"openai": fakellm.OpenAI, "anthropic": fakellm.Anthropic,
			"google": fakellm.Gemini, "responses": fakellm.Responses, "any": fakellm.Any}[args[0]]
		if srv != nil {
			srv.Close()
		}
		srv = fakellm.New(format, replies...)
		ts.Defer(srv.Close)
		h.srv = srv
		ts.Setenv("LLM_URL", srv.URL)
	case "requests":
		if srv == nil || len(args) != 2 {
			ts.Fatalf("llm requests FILE: no server")
		}
		var b strings.Builder
		for _, r := range srv.Requests() {
			data, err := json.Marshal(r)
			ts.Check(err)
			b.Write(append(data, '\n'))
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
	case "system":
		reqs := []fakellm.Request(nil)
		if srv != nil {
			reqs = srv.Requests()
		}
		if len(reqs) == 0 || len(args) != 2 {
			ts.Fatalf("llm system FILE: no request")
		}
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		ts.Check(json.Unmarshal([]byte(reqs[0].Body), &body))
		if len(body.Messages) == 0 || body.Messages[0].Role != "system" {
			ts.Fatalf("llm system: the first request has no system message")
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(body.Messages[0].Content+"\n"), 0o644))
	case "stop":
		if srv != nil {
			srv.Close()
		}
	default:
		ts.Fatalf("llm: unknown subcommand %q", args[0])
	}
}

type llmKey struct{}

type llmHolder struct{ srv *fakellm.Server }

// setupLLM gives a script the holder of its llm server.
func setupLLM(env *testscript.Env) {
	env.Values[llmKey{}] = &llmHolder{}
}
