package run

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/prompt"
)

// asked records the questions a front end is asked and accepts each.
type asked struct{ qs []prompt.Question }

func (a *asked) Ask(_ context.Context, q prompt.Question) (prompt.Answer, error) {
	a.qs = append(a.qs, q)
	return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"v-` + q.ID + `"`), Source: prompt.SourceJSONL}, nil
}

// A resumed run asks again only the secrets whose placeholder the model
// holds in the result of their call: not a pending call's (it runs
// again), and not one whose result never carried it (a call cut off
// after its answer by a second Ctrl-C, run again on the previous resume),
// whose number may since name another secret.
func TestReaskSecretsOnlyThoseTheModelHolds(t *testing.T) {
	secret := func(n int, call, msg string) session.SecretQuestion {
		return session.SecretQuestion{N: n, Question: prompt.Question{CallID: call, Tool: "user_prompt", Kind: prompt.KindText, Message: msg, Secret: true}}
	}
	loaded := &session.Loaded{Secrets: []session.SecretQuestion{
		secret(1, "a", "DB password?"),
		secret(2, "x", "Stale?"),   // x was run again after a resume, and declined
		secret(2, "y", "Token?"),   // so 2 went to y
		secret(3, "p", "Pending?"), // p is pending: no result
	}}
	msgs := []exec.Message{
		{Role: exec.RoleTool, ToolCallID: "a", Text: `{"action":"accept","content":"$HITL_SECRET_1"}`},
		{Role: exec.RoleTool, ToolCallID: "x", Text: `{"action":"decline"}`},
		{Role: exec.RoleTool, ToolCallID: "y", Text: `{"action":"accept","content":"$HITL_SECRET_2"}`},
		{Role: exec.RoleAssistant, ToolCalls: []exec.ToolCall{{ID: "p", Name: "user_prompt"}}},
	}
	fe := &asked{}
	secrets := &prompt.Secrets{}
	asker := &prompt.Asker{FrontEnd: fe, Secrets: secrets, Unanswered: prompt.UnansweredStop}
	if err := reaskSecrets(context.Background(), asker, loaded, msgs, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range fe.qs {
		got = append(got, q.ID+" "+q.Message)
	}
	if want := "s1 DB password?, s2 Token?"; strings.Join(got, ", ") != want {
		t.Fatalf("asked %q, want %q", strings.Join(got, ", "), want)
	}
	if env := strings.Join(secrets.Env(), " "); env != "HITL_SECRET_1=v-s1 HITL_SECRET_2=v-s2" {
		t.Fatalf("Env = %s", env)
	}
}
