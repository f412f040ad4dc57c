package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hitl-dev/hitl/prompt"
)

// desk gives each call an Asker with the answers file, the front end and
// the policy of the test.
type desk struct {
	answers *prompt.AnswersFile
	fe      prompt.FrontEnd
	policy  prompt.Unanswered
}

func (d desk) Turn(context.Context) (*prompt.Asker, func(), error) {
	a := &prompt.Asker{FrontEnd: d.fe, Unanswered: d.policy}
	if d.answers != nil {
		a.Sources = append(a.Sources, d.answers)
	}
	return a, func() {}, nil
}

func (desk) Dir() string { return "/srv/app" }

func answersFile(t *testing.T, yaml string) *prompt.AnswersFile {
	t.Helper()
	if yaml == "" {
		return nil
	}
	path := filepath.Join(t.TempDir(), "answers.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	af, err := prompt.LoadAnswers(path)
	if err != nil {
		t.Fatal(err)
	}
	af.Bind("/srv/app", nil)
	return af
}

// connect serves d to a client over pipes; leave drops the connection
// as a client process that exits does.
func connect(t *testing.T, d Desk) (cs *mcp.ClientSession, leave func()) {
	t.Helper()
	srv, err := New(d, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Run(ctx, &mcp.IOTransport{Reader: c2sR, Writer: s2cW}); close(done) }()
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	leave = func() { c2sW.Close(); s2cR.Close() }
	t.Cleanup(func() { leave(); cs.Close(); cancel(); <-done })
	return cs, leave
}

func call(t *testing.T, cs *mcp.ClientSession, name, args string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String(), res.IsError
}

const touch = `{"tool_name":"Bash","input":{"command":"touch APPROVED","description":"make it"},"tool_use_id":"toolu_1"}`

func TestApproveAllowsOnlyAnOptionNamed(t *testing.T) {
	tests := []struct {
		name    string
		answers string
		policy  prompt.Unanswered
		args    string
		want    string
	}{
		{"once", `[{tool: Bash, match: "touch APPROVED", content: once}]`, prompt.UnansweredStop, touch,
			`{"behavior":"allow","updatedInput":{"command":"touch APPROVED","description":"make it"}}`},
		{"no", `[{tool: Bash, match: "touch APPROVED", content: "no"}]`, prompt.UnansweredStop, touch,
			`{"behavior":"deny","message":"the user did not approve this command; it was not run"}`},
		{"free text refuses with it", `[{tool: Bash, match: "touch APPROVED", text: "not today"}]`, prompt.UnansweredStop, touch,
			`{"behavior":"deny","message":"the user did not approve this command; it was not run. The user said: not today"}`},
		{"an index is never an approval", `[{tool: Bash, match: "touch APPROVED", content: 0}]`, prompt.UnansweredStop, touch,
			`{"behavior":"deny","message":"hitl could not ask: `},
		{"true is no option", `[{tool: Bash, match: "touch APPROVED", content: true}]`, prompt.UnansweredStop, touch,
			`{"behavior":"deny","message":"hitl could not ask: `},
		{"an entry without tool does not answer consent", `[{match: "touch APPROVED", content: once}]`, prompt.UnansweredStop, touch,
			`{"behavior":"deny","message":"no one answered: `},
		{"the match covers the whole command", `[{tool: Bash, match: "touch", content: once}]`, prompt.UnansweredStop, touch,
			`{"behavior":"deny","message":"no one answered: `},
		{"what changes how it runs is approved with it", `[{tool: Bash, match: "touch APPROVED", content: once}]`, prompt.UnansweredStop,
			`{"tool_name":"Bash","input":{"command":"touch APPROVED","run_in_background":true}}`,
			`{"behavior":"deny","message":"no one answered: `},
		{"nobody, deny", ``, prompt.UnansweredStop, touch,
			`{"behavior":"deny","message":"no one answered: no front end (--prompt none) and no answer in the answers file"}`},
		{"nobody, cancel", ``, prompt.UnansweredCancel, touch,
			`{"behavior":"deny","message":"no one answered (policy): the call was not approved"}`},
		{"another tool is shown whole", `[{tool: Write, match: '(?s).*"file_path": "a.txt".*', content: once}]`, prompt.UnansweredStop,
			`{"tool_name":"Write","input":{"file_path":"a.txt","content":"x"}}`,
			`{"behavior":"allow","updatedInput":{"file_path":"a.txt","content":"x"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, _ := connect(t, desk{answers: answersFile(t, tt.answers), policy: tt.policy})
			got, isErr := call(t, cs, Approve, tt.args)
			if isErr || !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %s (isError %v), want %s…", got, isErr, tt.want)
			}
		})
	}
}

func TestBadArgumentsAreToolErrorsNamingTheField(t *testing.T) {
	tests := []struct {
		name, tool, args, want string
	}{
		{"no tool_name", Approve, `{"input":{}}`, "tool_name"},
		{"input not an object", Approve, `{"tool_name":"Bash","input":"rm -rf /"}`, "input"},
		{"a key twice", Approve, `{"tool_name":"Bash","input":{"command":"ls","command":"rm -rf /"}}`, `"command" is given twice`},
		{"case twins", Approve, `{"tool_name":"Bash","Tool_Name":"Write","input":{}}`, "differ only in case"},
		{"five questions", AskUserQuestion, `{"questions":[` + strings.Repeat(`{"question":"q","header":"h","options":[{"label":"a"},{"label":"b"}]},`, 4) + `{"question":"q","header":"h","options":[{"label":"a"},{"label":"b"}]}]}`, "1 to 4 questions"},
		{"no message", UserPrompt, `{"schema":{"type":"string"}}`, "message"},
		{"a secret", UserPrompt, `{"message":"token?","schema":{"type":"string","format":"password"}}`, "does not ask for secrets"},
	}
	cs, _ := connect(t, desk{policy: prompt.UnansweredStop})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isErr := call(t, cs, tt.tool, tt.args)
			if !isErr || !strings.Contains(got, tt.want) {
				t.Errorf("got %s (isError %v), want an error naming %s", got, isErr, tt.want)
			}
		})
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{}}); err == nil {
		t.Error("an unknown tool: no error")
	}
}

func TestQuestionsAnswered(t *testing.T) {
	cs, _ := connect(t, desk{policy: prompt.UnansweredStop, answers: answersFile(t, `
- {match: "Which environment", content: staging}
- {match: "Replicas", content: 3}
`)})
	got, _ := call(t, cs, AskUserQuestion, `{"questions":[{"question":"Which environment?","header":"Env","options":[{"label":"staging"},{"label":"production"}]}]}`)
	if got != `{"answers":{"Env":"staging"}}` {
		t.Errorf("ask_user_question: %s", got)
	}
	got, _ = call(t, cs, UserPrompt, `{"message":"Replicas?","schema":{"type":"integer","minimum":1}}`)
	if got != `{"action":"accept","content":3}` {
		t.Errorf("user_prompt: %s", got)
	}
	got, isErr := call(t, cs, UserPrompt, `{"message":"Nobody knows?"}`)
	if !isErr || !strings.HasPrefix(got, "no one answered: ") {
		t.Errorf("unanswered user_prompt: %s (isError %v)", got, isErr)
	}
}

// waiting is a front end that waits for its context, telling the test
// when it starts asking and when its context ended.
type waiting struct{ asking, ended chan struct{} }

func (w waiting) Ask(ctx context.Context, q prompt.Question) (prompt.Answer, error) {
	close(w.asking)
	<-ctx.Done()
	close(w.ended)
	return prompt.Answer{}, ctx.Err()
}

func TestClientGoneEndsTheQuestion(t *testing.T) {
	fe := waiting{asking: make(chan struct{}), ended: make(chan struct{})}
	cs, leave := connect(t, desk{fe: fe, policy: prompt.UnansweredStop})
	result := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: Approve, Arguments: json.RawMessage(touch)})
		result <- err
	}()
	<-fe.asking
	leave()
	select {
	case <-fe.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the question went on after the client went away")
	}
	if err := <-result; err == nil {
		t.Error("the call returned a result after the client went away")
	}
}
