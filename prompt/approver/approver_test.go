package approver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/prompt"
)

func approval() prompt.Question {
	q := prompt.ApprovalQuestion("Run this command?\n\nmake deploy", true)
	q.ID, q.CallID, q.Tool, q.Subject = "p3", "call_2_1", "shell", "make deploy"
	return q
}

func TestParseReply(t *testing.T) {
	text := prompt.Question{ID: "p1", Kind: prompt.KindText}
	tests := []struct {
		name     string
		q        prompt.Question
		nonce    string
		reply    string
		want     string // the answer's content, or the error's start
		identity string
		pass     bool
	}{
		{"bare value", text, "", `"staging"` + "\n", `"staging"`, "", false},
		{"full form with identity", approval(), "", `{"action":"accept","content":"once","approver":"alice"}`, `"once"`, "alice", false},
		{"pass", approval(), "", `{"action":"pass"}`, "", "", true},
		{"pass with identity", approval(), "", `{"action":"pass","approver":"bot"}`, "", "bot", true},
		{"pass bound to the question (hitl ask --request)", approval(), "n1", `{"action":"pass","prompt_id":"p3","nonce":"n1"}`, "", "", true},
		{"pass for another question", approval(), "n1", `{"action":"pass","prompt_id":"p2","nonce":"n1"}`, "error: the answer is not bound to this question: it names prompt_id", "", false},
		{"nonce echoed", approval(), "n1", `{"content":"once","nonce":"n1"}`, `"once"`, "", false},
		{"nonce of another question", approval(), "n1", `{"content":"once","nonce":"n2"}`, "error: the answer is not bound to this question: its \"nonce\" is another question's", "", false},
		{"nonce missing", approval(), "n1", `{"content":"once"}`, "error: the answer is not bound to this question: it carries no \"nonce\"", "", false},
		{"bare value without the nonce", approval(), "n1", `"once"`, "error: the answer is not bound to this question: it carries no \"nonce\"", "", false},
		{"nonce given twice", approval(), "n1", `{"content":"once","nonce":"n2","nonce":"n1"}`, `error: the key "nonce" appears twice`, "", false},
		{"nonce case twin", approval(), "n1", `{"content":"once","Nonce":"n1"}`, "error: the answer is not bound to this question: it carries no", "", false},
		{"index for consent", approval(), "", `1`, "error: this question asks for consent: name the option", "", false},
		{"identity not a string", approval(), "", `{"content":"once","approver":7}`, `error: "approver" must be a string`, "", false},
		{"two lines", text, "", "\"a\"\n\"b\"\n", "error: more than one line", "", false},
		{"another question's id", text, "", `{"prompt_id":"p9","content":"x"}`, `error: the answer is not bound to this question: it names prompt_id "p9", and the question asked is p1`, "", false},
		{"garbage", text, "", `sure, go ahead`, "error: not JSON", "", false},
		{"empty", text, "", "\n", "error: an empty reply", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, identity, err := parseReply([]byte(tt.reply), tt.q, tt.nonce, tt.nonce != "")
			switch {
			case tt.pass:
				if !errors.Is(err, errPass) {
					t.Fatalf("err = %v, want pass", err)
				}
			case strings.HasPrefix(tt.want, "error: "):
				if err == nil || !strings.HasPrefix(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				return
			case err != nil:
				t.Fatal(err)
			default:
				if string(a.Content) != tt.want || a.Source != prompt.SourceApprover {
					t.Fatalf("answer %+v, want content %s from approver", a, tt.want)
				}
			}
			if identity != tt.identity {
				t.Errorf("identity %q, want %q", identity, tt.identity)
			}
		})
	}
}

func TestInterruptOf(t *testing.T) {
	yes := prompt.Question{ID: "p2", Kind: prompt.KindConfirm, Message: "Ship?", Consent: prompt.ConsentConfirm}
	pick := prompt.Question{ID: "p4", Kind: prompt.KindChoice, Message: "Which?", Options: []prompt.Option{{ID: "a"}, {ID: "b"}}, Multiple: true}
	tests := []struct {
		q    prompt.Question
		want string
	}{
		{approval(), `{"id":"p3","reason":"confirmation","message":"Run this command?\n\nmake deploy","tool_call_id":"call_2_1","response_schema":{"enum":["once","session","no"],"type":"string"}}`},
		{yes, `{"id":"p2","reason":"confirmation","message":"Ship?","tool_call_id":"","response_schema":{"type":"boolean"}}`},
		{pick, `{"id":"p4","reason":"input_required","message":"Which?","tool_call_id":"","response_schema":{"items":{"enum":["a","b"],"type":"string"},"type":"array"}}`},
		{prompt.Question{ID: "p5", Kind: prompt.KindText, Message: "Name?", Agent: "helper"}, `{"id":"p5","reason":"input_required","message":"Name?","tool_call_id":"","agent":"helper","response_schema":{"type":"string"}}`},
	}
	for _, tt := range tests {
		got, _ := json.Marshal(InterruptOf(tt.q))
		if string(got) != tt.want {
			t.Errorf("InterruptOf(%s):\n got %s\nwant %s", tt.q.ID, got, tt.want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://approvals.example.com/q": "",
		"http://127.0.0.1:8787/":          "",
		"http://localhost/":               "",
		"http://[::1]:9/":                 "",
		"http://approvals.example.com/q":  "http:// is allowed only to a loopback host",
		"ftp://x/":                        "is not an http(s) URL",
		"approve.sh":                      "is not an http(s) URL",
	} {
		_, err := CheckURL(raw)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURL(%q) = %v, want %q", raw, err, want)
		}
	}
}
