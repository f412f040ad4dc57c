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
		{"back\\slash", `back\slash`, `back\slash`}, // shown as it is: printf 'a\nb' is printf 'a\nb'
		{`printf 'a\nb'`, `printf 'a\nb'`, `printf 'a\nb'`},
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

// On a terminal, an escape is drawn in reverse video; the same characters
// typed as text are drawn plain, so text cannot pass for an escape.
func TestEscapeTerminal(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\x1b[2J", "\x1b[7m\\x1b\x1b[27m[2J"},
		{`\x1b[2J`, `\x1b[2J`},
		{"a\u202eb", "a\x1b[7m\\u202e\x1b[27mb"},
		{"two\nlines", "two\nlines"},
	}
	for _, tt := range tests {
		if got := TextTerminal(tt.in); got != tt.want {
			t.Errorf("TextTerminal(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := LineTerminal("a\nb"); got != "a\x1b[7m\\x0a\x1b[27mb" {
		t.Errorf("LineTerminal: %q", got)
	}
}

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
		cut  int
	}{
		{"short", 10, "short", 0},
		{"exactly", 7, "exactly", 0},
		{"abcdef", 3, "abc…", 3},
		{"héllo", 2, "h…", 5}, // é is two bytes: never cut in half
		{"✓✓", 4, "✓…", 3},
	}
	for _, tt := range tests {
		got, cut := Shorten(tt.in, tt.max)
		if got != tt.want || cut != tt.cut {
			t.Errorf("Shorten(%q, %d) = %q, %d; want %q, %d", tt.in, tt.max, got, cut, tt.want, tt.cut)
		}
	}
}

func TestJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"cmd":"printf 'a\\nb'\necho two"}`, `{"cmd":"printf 'a\\nb'\necho two"}`},
		{`{"cmd":"ls \u202e"}`, `{"cmd":"ls \u202e"}`},
		{"{\"cmd\":\"ls \u202e\"}", `{"cmd":"ls \u202e"}`},
		{"{\"cmd\":\"a\x1b[2Jb\"}", `{"cmd":"a\x1b[2Jb"}`},
		{"bad \xff json", `bad \xff json`},
		{"raw\nnewline", `raw\x0anewline`},
	}
	for _, tt := range tests {
		if got := JSON(tt.in); got != tt.want {
			t.Errorf("JSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
