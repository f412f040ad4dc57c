package approver

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzApproverReply: whatever an approver or a webhook sends back (bare
// values, keys given twice, other nonces, case twins), what it answers is
// bound to the question: a webhook's reply counts only as an object that
// carries the question's nonce under "nonce" once; a program's only when
// any nonce and prompt id it names are the question's; and a consent
// answer is one of the question's options, exactly as the reply named it.
func FuzzApproverReply(f *testing.F) {
	for _, seed := range []string{
		`"once"`, `"no"`, `1`, `true`, `null`, `[]`, `{}`,
		`{"content":"once","nonce":"n1"}`,
		`{"content":"once","nonce":"n2"}`,
		`{"content":"once"}`,
		`{"content":"once","Nonce":"n1"}`,
		`{"content":"once","NONCE":"n1","nonce":"n2"}`,
		`{"content":"once","nonce":"n2","nonce":"n1"}`,
		`{"content":"once","content":"no","nonce":"n1"}`,
		`{"Content":"once","nonce":"n1"}`,
		`{"action":"accept","content":"session","nonce":"n1","approver":"alice"}`,
		`{"action":"pass","nonce":"n1"}`,
		`{"prompt_id":"p9","content":"once","nonce":"n1"}`,
		`{"prompt_id":"p3","content":"once","nonce":"n1"}`,
		`{"prompt_id":"","content":"once","nonce":"n1"}`,
		`{"content":0,"nonce":"n1"}`,
		`{"content":"ONCE","nonce":"n1"}`,
		`{"text":"not today","nonce":"n1"}`,
		"{\"content\":\"once\",\"nonce\":\"n1\"}\n{\"content\":\"once\",\"nonce\":\"n1\"}",
		"\ufeff{\"content\":\"once\",\"nonce\":\"n1\"}",
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	q := approval()
	options := map[string]bool{"once": true, "session": true, "no": true}
	f.Fuzz(func(t *testing.T, reply []byte, webhook bool) {
		a, _, err := parseReply(reply, q, "n1", webhook)
		if err != nil { // a refusal, or a pass
			return
		}
		// Read independently: one object, each key once.
		var obj map[string]json.RawMessage
		if json.Unmarshal(bytes.TrimSpace(reply), &obj) != nil || obj == nil {
			if webhook {
				t.Fatalf("webhook reply %q is no object, yet answered %+v", reply, a)
			}
		}
		nonce, hasNonce := obj["nonce"]
		switch {
		case webhook && (!hasNonce || string(nonce) != `"n1"`):
			t.Fatalf("webhook reply %q answered %+v without the question's nonce", reply, a)
		case !webhook && hasNonce && string(nonce) != `"n1"`:
			t.Fatalf("program reply %q answered %+v with another question's nonce", reply, a)
		}
		if id, ok := obj["prompt_id"]; ok && string(id) != `"p3"` {
			t.Fatalf("reply %q answered %+v naming prompt id %s", reply, a, id)
		}
		if a.Action == "accept" && a.Text == "" {
			var id string
			if json.Unmarshal(a.Content, &id) != nil || !options[id] {
				t.Fatalf("reply %q answered the approval with %s, no option of it", reply, a.Content)
			}
			var named string
			if c, ok := obj["content"]; ok && (json.Unmarshal(c, &named) != nil || named != id) {
				t.Fatalf("reply %q named %s, answered %s", reply, c, a.Content)
			}
		}
	})
}
