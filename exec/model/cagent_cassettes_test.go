package model_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
)

// cagentCassette is the part of a go-vcr cassette (docker/cagent's
// e2e/testdata/cassettes) this test reads.
type cagentCassette struct {
	Interactions []struct {
		Request struct {
			URL    string `yaml:"url"`
			Method string `yaml:"method"`
		} `yaml:"request"`
		Response struct {
			Body string `yaml:"body"`
			Code int    `yaml:"code"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

// Every Gemini (streamGenerateContent) and Responses API (/v1/responses)
// answer recorded in cagent's cassettes parses into the turn the recorded
// events describe, field for field: text, tool calls (id, name,
// arguments) and token counts. The cassettes are read from a checkout of
// docker/cagent named by CAGENT_DIR; they are not part of this repository.
func TestCagentRecordedResponsesParse(t *testing.T) {
	dir := os.Getenv("CAGENT_DIR")
	if dir == "" {
		t.Skip("CAGENT_DIR is not set: set it to a checkout of github.com/docker/cagent to parse its recorded Gemini and Responses API exchanges")
	}
	files, err := filepath.Glob(filepath.Join(dir, "e2e", "testdata", "cassettes", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	top, _ := filepath.Glob(filepath.Join(dir, "e2e", "testdata", "cassettes", "*.yaml"))
	files = append(files, top...)
	var gemini, resp int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c cagentCassette
		if err := yaml.Unmarshal(data, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i, it := range c.Interactions {
			if it.Response.Code != 200 || it.Request.Method != "POST" {
				continue
			}
			name := fmt.Sprintf("%s#%d", strings.TrimSuffix(filepath.Base(f), ".yaml"), i)
			switch {
			case strings.Contains(it.Request.URL, ":streamGenerateContent"):
				gemini++
				_, rest, _ := strings.Cut(it.Request.URL, "/models/")
				model, _, _ := strings.Cut(rest, ":")
				t.Run(name, func(t *testing.T) { replayGemini(t, model, it.Response.Body) })
			case strings.HasSuffix(it.Request.URL, "/v1/responses"):
				resp++
				t.Run(name, func(t *testing.T) { replayResponses(t, it.Response.Body) })
			}
		}
	}
	if gemini == 0 || resp == 0 {
		t.Fatalf("found %d Gemini and %d Responses API exchanges under %s: not a cagent checkout?", gemini, resp, dir)
	}
	t.Logf("parsed %d Gemini and %d Responses API exchanges", gemini, resp)
}

func dataLines(body string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if json.Unmarshal([]byte(d), &m) == nil {
				out = append(out, m)
			}
		}
	}
	return out
}

func num(v any) int64 { f, _ := v.(float64); return int64(f) }

func replayGemini(t *testing.T, name, body string) {
	// What the recorded events say, decoded independently of the SDK.
	want := exec.Turn{Message: exec.Message{Role: exec.RoleAssistant}}
	var text strings.Builder
	var wantArgs []any
	for _, ev := range dataLines(body) {
		if u, ok := ev["usageMetadata"].(map[string]any); ok {
			want.Usage = exec.Usage{InputTokens: num(u["promptTokenCount"]), OutputTokens: num(u["candidatesTokenCount"]) + num(u["thoughtsTokenCount"])}
		}
		cands, _ := ev["candidates"].([]any)
		if len(cands) == 0 {
			continue
		}
		content, _ := cands[0].(map[string]any)["content"].(map[string]any)
		parts, _ := content["parts"].([]any)
		for _, p := range parts {
			p := p.(map[string]any)
			if fc, ok := p["functionCall"].(map[string]any); ok {
				want.Message.ToolCalls = append(want.Message.ToolCalls, exec.ToolCall{Name: fc["name"].(string)})
				wantArgs = append(wantArgs, fc["args"])
			} else if p["thought"] != true {
				s, _ := p["text"].(string)
				text.WriteString(s)
			}
		}
	}
	want.Message.Text = text.String()

	srv := newSSEServer(t, body)
	cfg := &config.Model{Name: "g", Provider: "google", API: "google", Model: name, BaseURL: srv.URL}
	m, err := model.New(cfg, fastOpts(env(map[string]string{"GOOGLE_API_KEY": "k"})))
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Turn(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if p := srv.requests()[0].path; p != "/v1beta/models/"+name+":streamGenerateContent" {
		t.Errorf("path %s", p)
	}
	if len(got.Message.ToolCalls) != len(want.Message.ToolCalls) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for i := range got.Message.ToolCalls {
		var args any
		_ = json.Unmarshal(got.Message.ToolCalls[i].Arguments, &args)
		if !reflect.DeepEqual(args, wantArgs[i]) && !(wantArgs[i] == nil && reflect.DeepEqual(args, map[string]any{})) {
			t.Errorf("call %d arguments %s, want %v", i, got.Message.ToolCalls[i].Arguments, wantArgs[i])
		}
		got.Message.ToolCalls[i] = exec.ToolCall{Name: got.Message.ToolCalls[i].Name}
	}
	got.Message.Thinking = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func replayResponses(t *testing.T, body string) {
	want := exec.Turn{Message: exec.Message{Role: exec.RoleAssistant}}
	var text strings.Builder
	for _, ev := range dataLines(body) {
		switch ev["type"] {
		case "response.output_text.delta":
			text.WriteString(ev["delta"].(string))
		case "response.output_item.done":
			if item := ev["item"].(map[string]any); item["type"] == "function_call" {
				want.Message.ToolCalls = append(want.Message.ToolCalls, exec.ToolCall{ID: item["call_id"].(string), Name: item["name"].(string), Arguments: json.RawMessage(item["arguments"].(string))})
			}
		case "response.completed":
			u := ev["response"].(map[string]any)["usage"].(map[string]any)
			want.Usage = exec.Usage{InputTokens: num(u["input_tokens"]), OutputTokens: num(u["output_tokens"])}
		}
	}
	want.Message.Text = text.String()

	srv := newSSEServer(t, body)
	cfg := &config.Model{Name: "r", Provider: "openai", API: config.APIResponses, Model: "gpt-5", BaseURL: srv.URL + "/v1"}
	m, err := model.New(cfg, fastOpts(env(map[string]string{"OPENAI_API_KEY": "k"})))
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Turn(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
