package prompt

import "testing"

// An answer line naming a key twice in one object is refused: hitl and a
// person or script reading the line must never disagree about it.
func TestDuplicateKey(t *testing.T) {
	tests := []struct {
		in  string
		key string
		dup bool
	}{
		{`{"content":"no","content":"once"}`, "content", true},
		{`{"a":{"x":1,"x":2}}`, "x", true},
		{`{"a":[{"x":1},{"x":2}]}`, "", false},
		{`{"a":{"b":1},"b":2}`, "", false},
		{`{"a":{"b":1},"a":2}`, "a", true},
		{`[{"k":1,"j":[1,{"k":2}],"k":3}]`, "k", true},
		{`"plain"`, "", false},
		{`{"prompt_id":"p1","action":"accept","content":{"go":true}}`, "", false},
	}
	for _, tt := range tests {
		k, dup := duplicateKey([]byte(tt.in))
		if dup != tt.dup || k != tt.key {
			t.Errorf("duplicateKey(%s) = %q, %v; want %q, %v", tt.in, k, dup, tt.key, tt.dup)
		}
	}
}
