package prompt

import (
	"encoding/json"
	"testing"
)

// FuzzAnswerLine: any line, against each kind of question, is either a
// canonical answer or a rejection with a reason; never a panic.
func FuzzAnswerLine(f *testing.F) {
	for _, s := range []string{
		`{"prompt_id":"p1","action":"accept","content":"a"}`, `{"action":"decline"}`, `{"text":"x"}`,
		`"a"`, `1`, `["a","b"]`, `{"a":"x","n":2}`, `true`, "\xef\xbb\xbf\"a\"\r", ``, `{`, `null`, `{"content":null}`,
	} {
		f.Add([]byte(s))
	}
	questions := []Question{
		{ID: "p1", Kind: KindText},
		{ID: "p1", Kind: KindText, Schema: json.RawMessage(`{"type":"number","maximum":10}`)},
		{ID: "p1", Kind: KindConfirm},
		choice(false, false, "a", "b"),
		choice(true, true, "a", "b", "1"),
		{ID: "p1", Kind: KindForm, Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"n":{"type":"integer"}},"required":["a"]}`)},
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		l, skip, err := ParseLine(line)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("rejection without a reason")
			}
			return
		}
		if skip {
			return
		}
		for _, q := range questions {
			ans, err := Check(q, l.Answer)
			if err != nil {
				if err.Error() == "" {
					t.Fatal("rejection without a reason")
				}
				continue
			}
			if ans.Action == Accept && len(ans.Content) > 0 && !json.Valid(ans.Content) {
				t.Fatalf("accepted content is not JSON: %q", ans.Content)
			}
		}
	})
}
