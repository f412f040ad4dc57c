package suggest

import "testing"

func TestDidYouMean(t *testing.T) {
	keys := []string{"match", "tool", "cwd", "action", "content", "text", "repeat"}
	for _, tt := range []struct{ word, want string }{
		{"contnt", ` (did you mean "content"?)`},
		{"Tool", ` (did you mean "tool"?)`},
		{"mach", ` (did you mean "match"?)`},
		{"zzzzzz", ""},
		{"acton", ` (did you mean "action"?)`},
		{"txet", ` (did you mean "text"?)`}, // two letters swapped: one edit
	} {
		if got := DidYouMean(tt.word, keys); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.word, got, tt.want)
		}
	}
}
