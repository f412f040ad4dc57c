package termtext

import "testing"

func TestEscape(t *testing.T) {
	tests := []struct {
		in, line, text string
	}{
		{"plain text", "plain text", "plain text"},
		{"two\nlines\ttab", `two\x0alines\x09tab`, "two\nlines\ttab"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
		{"rm -rf /\u202e#gnp.x", `rm -rf /\u202e#gnp.x`, `rm -rf /\u202e#gnp.x`},
		{"zero\u200bwidth", `zero\u200bwidth`, `zero\u200bwidth`},
		{"back\\slash", `back\\slash`, `back\\slash`},
		{"bad \xff byte", `bad \xff byte`, `bad \xff byte`},
		{"héllo ✓", "héllo ✓", "héllo ✓"},
		{"bell\a", `bell\x07`, `bell\x07`},
		{"cr\rover", `cr\x0dover`, `cr\x0dover`},
	}
	for _, tt := range tests {
		if got := Line(tt.in); got != tt.line {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
		}
		if got := Text(tt.in); got != tt.text {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
		}
	}
}
