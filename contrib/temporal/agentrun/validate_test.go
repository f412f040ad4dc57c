package agentrun

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidateAnswer(t *testing.T) {
	env := Interrupt{ID: "p2", Reason: "input_required", Message: "Which environment?", ResponseSchema: json.RawMessage(`{"type":"string","enum":["staging","production"]}`)}
	pending := []Interrupt{approval, env}
	for _, tc := range []struct {
		name, doc, err string
	}{
		{"approval named", `{"resume":[{"interruptId":"p1","status":"resolved","payload":"once"}]}`, ""},
		{"cancelled", `{"resume":[{"interruptId":"p1","status":"cancelled"}]}`, ""},
		{"both", `{"resume":[{"interruptId":"p1","payload":"no"},{"interruptId":"p2","payload":"staging"}]}`, ""},
		{"consent is never true", `{"resume":[{"interruptId":"p1","payload":true}]}`, "naming its option"},
		{"consent is never an index", `{"resume":[{"interruptId":"p1","payload":0}]}`, "naming its option"},
		{"consent outside the options", `{"resume":[{"interruptId":"p1","payload":"yes"}]}`, "does not fit its response_schema"},
		{"schema", `{"resume":[{"interruptId":"p2","payload":"prod"}]}`, "does not fit its response_schema"},
		{"unknown interrupt", `{"resume":[{"interruptId":"p9","payload":"once"}]}`, `unknown interrupt id "p9": the run waits for p1 (confirmation), p2 (input_required)`},
		{"twice", `{"resume":[{"interruptId":"p2","payload":"staging"},{"interruptId":"p2","payload":"staging"}]}`, "answered twice"},
		{"bad status", `{"resume":[{"interruptId":"p2","status":"done","payload":"staging"}]}`, `status "done"`},
		{"no payload", `{"resume":[{"interruptId":"p2"}]}`, "needs a \"payload\""},
		{"unknown field", `{"resume":[{"interruptId":"p2","payload":"staging","extra":1}]}`, "not an AG-UI resume document"},
		{"empty", "  \n", "empty"},
		{"malformed", `{"resume":`, "not an AG-UI resume document nor an answers file"},
		{"answers file for the question", "- match: environment\n  content: staging\n", ""},
		{"answers file approving", "- tool: shell\n  match: make test\n  content: once\n", ""},
		{"answers jsonl", `{"tool":"shell","match":"make test","content":"once"}` + "\n", ""},
		{"answers json array", `[{"match":"environment","content":"staging"}]`, ""},
		{"answers file answering nothing", "- match: nothing here\n  content: x\n", "no entry of the answers file answers"},
		{"answers file unknown key", "- mtach: environment\n", "not an AG-UI resume document nor an answers file"},
		{"answers file bad regexp", "- match: '('\n", "match"},
		{"answers file bad action", "- action: approve\n", "action \"approve\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateAnswer([]byte(tc.doc), pending)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
	// A secret's value never enters history: refused in a document, and any
	// answers file while a secret is pending; cancelling it is taken.
	secret := []Interrupt{{ID: "p3", Reason: "input_required", Secret: true}, env}
	for doc, want := range map[string]string{
		`{"resume":[{"interruptId":"p3","payload":"hunter2"}]}`:                                           "secret question",
		"- match: environment\n  content: staging\n":                                                      "secret question",
		`{"resume":[{"interruptId":"p3","status":"cancelled"},{"interruptId":"p2","payload":"staging"}]}`: "",
	} {
		err := ValidateAnswer([]byte(doc), secret)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: err = %v, want %q", doc, err, want)
		}
	}
	// A consent question alone is never answered by an entry without tool.
	if err := ValidateAnswer([]byte("- content: once\n"), []Interrupt{approval}); err == nil {
		t.Error("an answers entry without tool and match answered an approval")
	}
	if err := ValidateAnswer([]byte(strings.Repeat(" ", MaxAnswer+1)), pending); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a huge answer: %v", err)
	}
}

// An update carries a JSON document as itself and any other text (a YAML
// answers file) as a JSON string; both come back as the text given.
func TestAnswerArgRoundTrip(t *testing.T) {
	for _, doc := range []string{
		`{"resume":[{"interruptId":"p1","payload":"once"}]}`,
		`[{"match":"x","content":"y"}]`,
		"- tool: shell\n  match: make test\n  content: once\n",
		`{"match":"x"}` + "\n" + `{"match":"y"}` + "\n",
	} {
		arg := AnswerArg([]byte(doc))
		if !json.Valid(arg) {
			t.Fatalf("AnswerArg(%q) = %s: not JSON", doc, arg)
		}
		if got := AnswerText(arg); strings.TrimSpace(string(got)) != strings.TrimSpace(doc) {
			t.Errorf("AnswerText(AnswerArg(%q)) = %q", doc, got)
		}
	}
}
