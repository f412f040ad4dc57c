package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/exec/model/cassette"
)

// geminiServer speaks Gemini's streamGenerateContent (alt=sse): each
// request gets the next of replies, a list of SSE data payloads, a raw
// event stream (any format), or a status with a body. It keeps each
// request's path, key (x-goog-api-key, else Authorization) and body.
type geminiServer struct {
	*httptest.Server
	mu      sync.Mutex
	replies []geminiReply
	reqs    []geminiReq
}

type geminiReply struct {
	status  int
	header  map[string]string
	body    string   // an error body
	events  []string // data: payloads
	raw     string   // the whole event-stream body, sent as it is
	forever string   // an event sent until the client goes away
}

type geminiReq struct {
	path, query, key string
	body             map[string]any
}

func newGeminiServer(t *testing.T, replies ...geminiReply) *geminiServer {
	s := &geminiServer{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(data, &body)
		s.mu.Lock()
		key := r.Header.Get("x-goog-api-key")
		if key == "" {
			key = r.Header.Get("Authorization")
		}
		s.reqs = append(s.reqs, geminiReq{r.URL.Path, r.URL.RawQuery, key, body})
		if len(s.replies) == 0 {
			s.mu.Unlock()
			http.Error(w, `{"error":{"code":500,"message":"no more replies","status":"INTERNAL"}}`, 500)
			return
		}
		rep := s.replies[0]
		s.replies = s.replies[1:]
		s.mu.Unlock()
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		if rep.status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.status)
			io.WriteString(w, rep.body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, rep.raw)
		for _, e := range rep.events {
			fmt.Fprintf(w, "data: %s\r\n\r\n", e)
		}
		for rep.forever != "" && r.Context().Err() == nil {
			if _, err := fmt.Fprintf(w, "data: %s\r\n\r\n", rep.forever); err != nil {
				return
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *geminiServer) requests() []geminiReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]geminiReq(nil), s.reqs...)
}

func geminiModel(t *testing.T, cfg *config.Model, o model.Options) exec.Model {
	t.Helper()
	m, err := model.New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const (
	geminiCall  = `{"candidates":[{"content":{"parts":[{"thought":true,"text":"Let me list."},{"functionCall":{"name":"shell","args":{"cmd":"ls"}},"thoughtSignature":"c2lnLTE="}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":30,"candidatesTokenCount":5,"thoughtsTokenCount":7,"totalTokenCount":42},"modelVersion":"gemini-2.5-flash"}`
	geminiText1 = `{"candidates":[{"content":{"parts":[{"text":"All "}],"role":"model"},"index":0}]}`
	geminiText2 = `{"candidates":[{"content":{"parts":[{"text":"good."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":2,"totalTokenCount":52}}`
)

func geminiCfg(base string) *config.Model {
	return &config.Model{Name: "g", Provider: "google", API: "google", Model: "gemini-2.5-flash", BaseURL: base}
}

// A tool call and the turn after it, through the real wire format: the
// request carries the system instruction, the tools, the sampling keys and
// the thinking budget; the function call comes back with its thought
// signature, which the next request sends back with the call, and the tool
// result goes back as a functionResponse named for the tool.
func TestGeminiToolCallRoundTrip(t *testing.T) {
	srv := newGeminiServer(t,
		geminiReply{events: []string{geminiCall}},
		geminiReply{events: []string{geminiText1, geminiText2}},
	)
	cfg := geminiCfg(srv.URL)
	cfg.Temperature, cfg.FrequencyPenalty, cfg.PresencePenalty = ptr(0.5), ptr(0.25), ptr(-0.5)
	cfg.MaxTokens = ptr(int64(1000))
	cfg.ThinkingBudget = &config.ThinkingBudget{Tokens: 2048}
	m := geminiModel(t, cfg, fastOpts(env(map[string]string{"GOOGLE_API_KEY": "gk-1"})))

	req := request()
	t1, err := m.Turn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(t1.Message.ToolCalls) != 1 {
		t.Fatalf("turn 1: %+v", t1)
	}
	call := t1.Message.ToolCalls[0]
	if call.Name != "shell" || string(call.Arguments) != `{"cmd":"ls"}` || call.Signature != "c2lnLTE=" || call.ID == "" {
		t.Errorf("call %+v", call)
	}
	if want := []exec.Thinking{{Text: "Let me list."}}; !reflect.DeepEqual(t1.Message.Thinking, want) {
		t.Errorf("thinking %+v", t1.Message.Thinking)
	}
	if t1.Usage != (exec.Usage{InputTokens: 30, OutputTokens: 12}) {
		t.Errorf("usage %+v", t1.Usage)
	}
	req.Messages = append(req.Messages, t1.Message, exec.Message{Role: exec.RoleTool, ToolCallID: call.ID, ToolName: "shell", Text: "a.txt"})
	t2, err := m.Turn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if t2.Message.Text != "All good." || len(t2.Message.ToolCalls) != 0 || t2.Usage.InputTokens != 50 {
		t.Errorf("turn 2: %+v", t2)
	}

	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || r.query != "alt=sse" || r.key != "gk-1" {
		t.Errorf("request %s?%s key %q", r.path, r.query, r.key)
	}
	want := jsonOf(t, `{
		"contents":[{"role":"user","parts":[{"text":"hello"}]}],
		"systemInstruction":{"role":"user","parts":[{"text":"You are a test."}]},
		"generationConfig":{"maxOutputTokens":1000,"temperature":0.5,"frequencyPenalty":0.25,"presencePenalty":-0.5,
			"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}},
		"tools":[{"functionDeclarations":[{"name":"shell","description":"Run a command",
			"parametersJsonSchema":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}]}]}`)
	if !reflect.DeepEqual(r.body, want) {
		got, _ := json.Marshal(r.body)
		t.Errorf("first request body\n got %s", got)
	}
	contents, _ := json.Marshal(reqs[1].body["contents"])
	wantContents := `[{"parts":[{"text":"hello"}],"role":"user"},` +
		`{"parts":[{"functionCall":{"args":{"cmd":"ls"},"name":"shell"},"thoughtSignature":"c2lnLTE="}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"name":"shell","response":{"result":"a.txt"}}}],"role":"user"}]`
	if string(contents) != wantContents {
		t.Errorf("second request contents\n got %s\nwant %s", contents, wantContents)
	}
}

// cagent's thinking budgets on Gemini: a level on Gemini 3, tokens before;
// none turns thinking off.
func TestGeminiThinkingBudget(t *testing.T) {
	cases := []struct {
		model string
		tb    config.ThinkingBudget
		want  string
	}{
		{"gemini-2.5-flash", config.ThinkingBudget{Tokens: -1}, `{"includeThoughts":true,"thinkingBudget":-1}`},
		{"gemini-2.5-pro", config.ThinkingBudget{Effort: "medium"}, `{"includeThoughts":true,"thinkingBudget":8192}`},
		{"gemini-2.5-flash", config.ThinkingBudget{Disabled: true}, `{"thinkingBudget":0}`},
		{"gemini-3-pro-preview", config.ThinkingBudget{Effort: "high"}, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"gemini-3-flash", config.ThinkingBudget{Disabled: true}, `{"thinkingLevel":"LOW"}`},
		{"gemini-3-pro-preview", config.ThinkingBudget{Tokens: 4096}, `{"includeThoughts":true,"thinkingBudget":4096}`},
	}
	for _, c := range cases {
		t.Run(c.model+"/"+fmt.Sprint(c.tb), func(t *testing.T) {
			srv := newGeminiServer(t, geminiReply{events: []string{geminiText2}})
			cfg := geminiCfg(srv.URL)
			cfg.Model = c.model
			tb := c.tb
			cfg.ThinkingBudget = &tb
			m := geminiModel(t, cfg, fastOpts(env(map[string]string{"GEMINI_API_KEY": "k"})))
			if _, err := m.Turn(context.Background(), request()); err != nil {
				t.Fatal(err)
			}
			gc := srv.requests()[0].body["generationConfig"].(map[string]any)
			got, _ := json.Marshal(gc["thinkingConfig"])
			if string(got) != c.want {
				t.Errorf("thinkingConfig %s, want %s", got, c.want)
			}
		})
	}
}

// Keys: GOOGLE_API_KEY, else GEMINI_API_KEY, else token_key's variable;
// none is an error before any request.
func TestGeminiKeys(t *testing.T) {
	cases := []struct {
		env      map[string]string
		tokenKey string
		want     string
		missing  string
	}{
		{env: map[string]string{"GOOGLE_API_KEY": "g", "GEMINI_API_KEY": "m"}, want: "g"},
		{env: map[string]string{"GEMINI_API_KEY": "m"}, want: "m"},
		{env: map[string]string{"GOOGLE_API_KEY": "g", "MY_KEY": "mine"}, tokenKey: "MY_KEY", want: "mine"},
		{env: map[string]string{}, missing: "GOOGLE_API_KEY"},
		{env: map[string]string{"GOOGLE_API_KEY": "g"}, tokenKey: "MY_KEY", missing: "MY_KEY"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			srv := newGeminiServer(t, geminiReply{events: []string{geminiText2}})
			cfg := geminiCfg(srv.URL)
			cfg.TokenKey = c.tokenKey
			m, err := model.New(cfg, fastOpts(env(c.env)))
			if c.missing != "" {
				var mk *model.MissingKeyError
				if !errors.As(err, &mk) || mk.Var != c.missing {
					t.Fatalf("err %v, want a missing %s", err, c.missing)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Turn(context.Background(), request()); err != nil {
				t.Fatal(err)
			}
			if got := srv.requests()[0].key; got != c.want {
				t.Errorf("key %q, want %q", got, c.want)
			}
		})
	}
}

// 429 and 5xx are retried (bounded, Retry-After honoured), a stream cut
// before its finish reason is retried as a whole turn, a 400 is not
// retried and carries Gemini's message.
func TestGeminiRetries(t *testing.T) {
	t.Run("429 then ok", func(t *testing.T) {
		srv := newGeminiServer(t,
			geminiReply{status: 429, header: map[string]string{"Retry-After": "0"}, body: `{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`},
			geminiReply{status: 503, body: `{"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}`},
			geminiReply{events: []string{geminiText2}})
		m := geminiModel(t, geminiCfg(srv.URL), fastOpts(env(map[string]string{"GOOGLE_API_KEY": "k"})))
		tr, err := m.Turn(context.Background(), request())
		if err != nil || tr.Message.Text != "good." || len(srv.requests()) != 3 {
			t.Fatalf("turn %+v err %v after %d requests", tr, err, len(srv.requests()))
		}
	})
	t.Run("retries bounded", func(t *testing.T) {
		var replies []geminiReply
		for range 10 {
			replies = append(replies, geminiReply{status: 500, body: `{"error":{"code":500,"message":"down","status":"INTERNAL"}}`})
		}
		srv := newGeminiServer(t, replies...)
		o := fastOpts(env(map[string]string{"GOOGLE_API_KEY": "k"}))
		o.MaxRetries = 2
		_, err := geminiModel(t, geminiCfg(srv.URL), o).Turn(context.Background(), request())
		var ae *model.APIError
		if !errors.As(err, &ae) || ae.Status != 500 || ae.Retries != 2 || len(srv.requests()) != 3 {
			t.Fatalf("err %v after %d requests", err, len(srv.requests()))
		}
	})
	t.Run("400 not retried", func(t *testing.T) {
		srv := newGeminiServer(t, geminiReply{status: 400, body: `{"error":{"code":400,"message":"API key not valid","status":"INVALID_ARGUMENT"}}`})
		_, err := geminiModel(t, geminiCfg(srv.URL), fastOpts(env(map[string]string{"GOOGLE_API_KEY": "k"}))).Turn(context.Background(), request())
		if err == nil || !strings.Contains(err.Error(), "google: 400 Bad Request: API key not valid") || len(srv.requests()) != 1 {
			t.Fatalf("err %v after %d requests", err, len(srv.requests()))
		}
	})
	t.Run("cut stream", func(t *testing.T) {
		srv := newGeminiServer(t, geminiReply{events: []string{geminiText1}}, geminiReply{events: []string{geminiText1, geminiText2}})
		tr, err := geminiModel(t, geminiCfg(srv.URL), fastOpts(env(map[string]string{"GOOGLE_API_KEY": "k"}))).Turn(context.Background(), request())
		if err != nil || tr.Message.Text != "All good." || len(srv.requests()) != 2 {
			t.Fatalf("turn %+v err %v after %d requests", tr, err, len(srv.requests()))
		}
	})
	t.Run("malformed line", func(t *testing.T) {
		huge := `{"candidates":[` + strings.Repeat("x", 1<<20) + "\x1b]0;title\x07"
		srv := newGeminiServer(t, geminiReply{events: []string{huge}})
		_, err := geminiModel(t, geminiCfg(srv.URL), fastOpts(env(map[string]string{"GOOGLE_API_KEY": "k"}))).Turn(context.Background(), request())
		if err == nil || !strings.Contains(err.Error(), "google: malformed stream") || len(err.Error()) > 1000 || strings.ContainsRune(err.Error(), 0x1b) {
			t.Fatalf("err (%d bytes) %.300q", len(err.Error()), err)
		}
	})
	t.Run("safety stop", func(t *testing.T) {
		srv := newGeminiServer(t, geminiReply{events: []string{`{"candidates":[{"finishReason":"SAFETY","index":0}]}`}})
		_, err := geminiModel(t, geminiCfg(srv.URL), fastOpts(env(map[string]string{"GOOGLE_API_KEY": "k"}))).Turn(context.Background(), request())
		if err == nil || !strings.Contains(err.Error(), "the model stopped: SAFETY") {
			t.Fatalf("err %v", err)
		}
	})
}

// A server that streams text forever: the turn fails at the bound, is not
// retried, and the connection is dropped.
func TestGeminiTurnBound(t *testing.T) {
	srv := newGeminiServer(t, geminiReply{forever: geminiText1})
	o := fastOpts(env(map[string]string{"GOOGLE_API_KEY": "k"}))
	o.MaxTurnBytes = 64 << 10
	_, err := geminiModel(t, geminiCfg(srv.URL), o).Turn(context.Background(), request())
	var tl *model.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 64<<10 || len(srv.requests()) != 1 {
		t.Fatalf("err %v after %d requests", err, len(srv.requests()))
	}
}

// A Gemini conversation recorded to a cassette replays without the server
// or a key, and the key is not in the cassette.
func TestGeminiRecordReplay(t *testing.T) {
	const secret = "gk-very-secret"
	srv := newGeminiServer(t, geminiReply{events: []string{geminiCall}}, geminiReply{events: []string{geminiText1, geminiText2}})
	path := filepath.Join(t.TempDir(), "g.cassette")
	run := func(m exec.Model) []exec.Turn {
		req := request()
		var turns []exec.Turn
		for range 2 {
			tr, err := m.Turn(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			turns = append(turns, tr)
			req.Messages = append(req.Messages, tr.Message)
			for _, c := range tr.Message.ToolCalls {
				req.Messages = append(req.Messages, exec.Message{Role: exec.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Text: "a.txt"})
			}
		}
		return turns
	}
	rec, err := cassette.Record(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := fastOpts(env(map[string]string{"GOOGLE_API_KEY": secret}))
	o.Cassette = rec
	recorded := run(geminiModel(t, geminiCfg(srv.URL), o))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) {
		t.Fatal("the key is in the cassette")
	}
	rep, err := cassette.Replay(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	o = fastOpts(env(nil))
	o.Cassette = rep
	if replayed := run(geminiModel(t, geminiCfg(srv.URL), o)); !reflect.DeepEqual(replayed, recorded) {
		t.Errorf("replayed %+v\nrecorded %+v", replayed, recorded)
	}
}
