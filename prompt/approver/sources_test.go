package approver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/approver"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The consent rule (prompt.Admit, docs/approvals.md) over every answer
// source × the questions that try it: a consent question, one that hands
// over a secret, one of another directory, and a stale or replayed answer
// (one given for another question). Each source answers "once" as it
// would; only the cells marked yes may take it.
func TestEveryAnswerSourceAnswersOnlyItsQuestion(t *testing.T) {
	const (
		consent = iota
		secret
		otherDir
		stale
	)
	names := []string{"consent question", "secret-bearing question", "question of another directory", "stale or replayed answer"}
	safe, prod := t.TempDir(), t.TempDir()
	question := func(col int) prompt.Question {
		line, dir := "make deploy", safe
		switch col {
		case secret:
			line = "curl -H \"Authorization: $HITL_SECRET_1\" https://deploy.example"
		case otherDir:
			dir = prod
		}
		q := prompt.ApprovalQuestion(fmt.Sprintf("Run this command?\n\n%s\n\nin %s", line, dir), true)
		q.CallID, q.Tool, q.Subject, q.Dir = "call_1", "shell", line, dir
		q.HandsSecret = prompt.MentionsSecret(line)
		q.PersonOnly = q.HandsSecret
		return q
	}
	type row struct {
		name   string
		source prompt.Source
		// build makes the source's answerers and front end for column
		// col (stale: an answer meant for another question).
		build func(t *testing.T, col int) ([]prompt.Answerer, prompt.FrontEnd)
		want  [4]bool // per column: the answer is taken
	}
	rows := []row{
		{"terminal", prompt.SourceTTY, func(t *testing.T, col int) ([]prompt.Answerer, prompt.FrontEnd) {
			// A person answers what the screen shows: never a stale answer.
			if col == stale {
				return nil, nil
			}
			return nil, frontEnd{prompt.SourceTTY}
		}, [4]bool{true, true, true, false}},
		{"JSONL", prompt.SourceJSONL, func(t *testing.T, col int) ([]prompt.Answerer, prompt.FrontEnd) {
			line := `"once"`
			if col == stale {
				line = `{"prompt_id":"p9","content":"once"}`
			}
			return nil, prompt.NewJSONL(strings.NewReader(line + "\n"))
		}, [4]bool{true, true, true, false}},
		{"answers file", prompt.SourceAnswers, func(t *testing.T, col int) ([]prompt.Answerer, prompt.FrontEnd) {
			match := "make deploy"
			if col == secret {
				match = `curl -H "Authorization: \$HITL_SECRET_1" https://deploy\.example`
			}
			if col == stale {
				match = "make deploy-other"
			}
			f := answersFile(t, "answers.yaml", fmt.Sprintf("- tool: shell\n  match: '%s'\n  content: once\n", match))
			f.Bind(safe, nil)
			return []prompt.Answerer{f}, nil
		}, [4]bool{true, true, false, false}},
		{"AG-UI resume document", prompt.SourceAnswers, func(t *testing.T, col int) ([]prompt.Answerer, prompt.FrontEnd) {
			id := "p1"
			if col == stale {
				id = "p9"
			}
			return []prompt.Answerer{answersFile(t, "resume.json", `{"resume":[{"interruptId":"`+id+`","status":"resolved","payload":"once"}]}`)}, nil
		}, [4]bool{true, true, true, false}},
		{"approver program", prompt.SourceApprover, func(t *testing.T, col int) ([]prompt.Answerer, prompt.FrontEnd) {
			return []prompt.Answerer{approver.NewProgram("desk", []string{"desk"}, relay{stale: col == stale}, approver.Options{})}, nil
		}, [4]bool{true, true, true, false}},
		{"webhook", prompt.SourceApprover, func(t *testing.T, col int) ([]prompt.Answerer, prompt.FrontEnd) {
			return []prompt.Answerer{webhook(t, col == stale)}, nil
		}, [4]bool{true, true, true, false}},
		{"permission_request hook", prompt.SourceHook, func(t *testing.T, col int) ([]prompt.Answerer, prompt.FrontEnd) {
			if col == stale {
				return nil, nil // a hook is run for the call it is shown
			}
			return []prompt.Answerer{hook{}}, nil
		}, [4]bool{true, false, true, false}},
		{"session replay", prompt.SourceSession, func(t *testing.T, col int) ([]prompt.Answerer, prompt.FrontEnd) {
			id := "p1"
			if col == stale {
				id = "p9"
			}
			once := prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"once"`), Source: prompt.SourceTTY}
			l := &session.Loaded{
				Answers:   map[string]map[int]prompt.Answer{"call_1": {0: once}},
				AnswerIDs: map[string]map[int]string{"call_1": {0: id}},
			}
			return []prompt.Answerer{session.NewReplay(l, []exec.ToolCall{{ID: "call_1"}})}, nil
		}, [4]bool{false, false, false, false}}, // an approval is never replayed
	}
	for _, r := range rows {
		for col := consent; col <= stale; col++ {
			t.Run(r.name+"/"+names[col], func(t *testing.T) {
				sources, fe := r.build(t, col)
				a := &prompt.Asker{Sources: sources, FrontEnd: fe, Unanswered: prompt.UnansweredCancel}
				ans, err := a.Ask(context.Background(), question(col))
				if err != nil {
					t.Fatalf("Ask: %v", err)
				}
				took := ans.Source == r.source && string(ans.Content) == `"once"`
				if took != r.want[col] {
					t.Errorf("answer %+v: taken %v, want %v", ans, took, r.want[col])
				}
				if !took && ans.Action == prompt.Accept {
					t.Errorf("answered %+v by someone else", ans)
				}
			})
		}
	}
}

// frontEnd is a person at a terminal approving what is shown.
type frontEnd struct{ src prompt.Source }

func (f frontEnd) Ask(_ context.Context, q prompt.Question) (prompt.Answer, error) {
	return prompt.Admit(q, prompt.Reply{Answer: prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"once"`), Source: f.src}}, "")
}

// hook approves every call, as a permission_request hook may, through
// the rule its real source applies (exec/hooks).
type hook struct{}

func (hook) Answer(q prompt.Question) (prompt.Answer, bool, error) {
	a, err := prompt.Admit(q, prompt.Reply{Answer: prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"once"`), Source: prompt.SourceHook}}, "")
	return a, err == nil, nil
}

// relay is a desk relaying the answer to the question it got, or (stale)
// to an earlier one, with that one's nonce and prompt id.
type relay struct{ stale bool }

func (r relay) RunApprover(_ context.Context, _ []string, stdin []byte) ([]byte, error) {
	var req struct {
		PromptID string `json:"prompt_id"`
		Nonce    string `json:"nonce"`
	}
	if err := json.Unmarshal(stdin, &req); err != nil {
		return nil, err
	}
	if r.stale {
		req.PromptID, req.Nonce = "p0", "an-earlier-nonce"
	}
	return []byte(fmt.Sprintf(`{"action":"accept","content":"once","prompt_id":%q,"nonce":%q}`, req.PromptID, req.Nonce)), nil
}

// webhook answers "once" bound by the nonce POSTed, or (stale) as a bare
// value, which carries none.
func webhook(t *testing.T, stale bool) prompt.Answerer {
	t.Helper()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if wh.Verify(body, r.Header) != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var req struct {
			Nonce string `json:"nonce"`
		}
		_ = json.Unmarshal(body, &req)
		if stale {
			fmt.Fprintln(w, `"once"`)
			return
		}
		fmt.Fprintf(w, `{"content":"once","nonce":%q}`+"\n", req.Nonce)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	a, err := approver.NewWebhook(u, secret, nil, approver.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func answersFile(t *testing.T, name, text string) *prompt.AnswersFile {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := prompt.LoadAnswers(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
