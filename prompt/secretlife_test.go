package prompt

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// asked records the questions a front end is asked and accepts each.
type asked struct{ qs []Question }

func (a *asked) Ask(_ context.Context, q Question) (Answer, error) {
	a.qs = append(a.qs, q)
	return Answer{Action: Accept, Content: json.RawMessage(`"v-` + q.ID + `"`), Source: SourceJSONL}, nil
}

// A resumed run asks again only the secrets whose placeholder the model
// holds in the result of their call: not a pending call's (it runs
// again), and not one whose result never carried it (a call cut off
// after its answer by a second Ctrl-C, run again on the previous resume),
// whose number may since name another secret.
func TestReaskSecretsOnlyThoseTheModelHolds(t *testing.T) {
	secret := func(n int, call, msg string) SecretRecord {
		return SecretRecord{N: n, Question: Question{CallID: call, Tool: "user_prompt", Kind: KindText, Message: msg, Secret: true}}
	}
	records := []SecretRecord{
		secret(1, "a", "DB password?"),
		secret(2, "x", "Stale?"),   // x was run again after a resume, and declined
		secret(2, "y", "Token?"),   // so 2 went to y
		secret(3, "p", "Pending?"), // p is pending: no result
	}
	results := map[string]string{ // p is pending: no result
		"a": `{"action":"accept","content":"$HITL_SECRET_1"}`,
		"x": `{"action":"decline"}`,
		"y": `{"action":"accept","content":"$HITL_SECRET_2"}`,
	}
	fe := &asked{}
	secrets := &Secrets{}
	asker := &Asker{FrontEnd: fe, Secrets: secrets, Unanswered: UnansweredStop}
	if err := secrets.Reask(context.Background(), asker, records, results, io.Discard); err != nil {
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
