package tty

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hitl-dev/hitl/prompt"
)

func TestValueMode(t *testing.T) {
	tests := []struct {
		schema string
		typed  string
		want   string // content, or "error"
	}{
		{"", "hello", `"hello"`},
		{`{"type":"string"}`, "42", `"42"`},
		{`{"type":"integer"}`, " 42 ", `42`},
		{`{"type":["number","integer"]}`, "1.5", `1.5`},
		{`{"type":"number"}`, "many", "error"},
		{`{"type":"number"}`, "1 2", "error"},
		{`{"type":"number"}`, `"1"`, "error"},
		{`{"type":"array"}`, `[1, 2]`, `[1, 2]`},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `7`, `7`},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `seven`, `"seven"`},
		{`{"type":["string","null"]}`, `null`, `null`},
	}
	for _, tt := range tests {
		got, err := valueModeOf(json.RawMessage(tt.schema)).parse(tt.typed)
		if tt.want == "error" {
			if err == nil {
				t.Errorf("%s %q: got %s, want an error", tt.schema, tt.typed, got)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%s %q: got %s, %v; want %s", tt.schema, tt.typed, got, err, tt.want)
		}
	}
}

func TestDefaultText(t *testing.T) {
	if got := plainString.defaultText(json.RawMessage(`"main"`)); got != "main" {
		t.Errorf("string default = %q", got)
	}
	if got := jsonValue.defaultText(json.RawMessage(`{ "a": 1 }`)); got != `{"a":1}` {
		t.Errorf("JSON default = %q", got)
	}
}

func TestFormatMessage(t *testing.T) {
	q := prompt.Question{
		Message: "Pick\none\x1b[2J", Title: "T", Header: "H", Hint: "a\thint",
		Index: 1, Count: 3,
	}
	want := "(2 of 3) [H] T\n  Pick\n  one\\x1b[2J (Esc to dismiss)\n  a    hint"
	if got := formatMessage(q, dismissTag); got != want {
		t.Errorf("formatMessage =\n%q\nwant\n%q", got, want)
	}
	if got := summaryMessage(q); got != "(2 of 3) [H] T\n  Pick\n  one\\x1b[2J" {
		t.Errorf("summaryMessage = %q", got)
	}
	if got := formatMessage(prompt.Question{Message: "Same", Title: "Same"}); got != "Same" {
		t.Errorf("a title equal to the message is drawn once: %q", got)
	}
}

func TestTranslate(t *testing.T) {
	tests := []struct {
		in        string
		want      string
		dismissed bool
	}{
		{"\x1b", "\x03", true},
		{"\x1b\x1b", "\x03", true},
		{"\x04", "\x03", true},
		{"\x03", "\x03", false},
		{"\x1b[A", "\x1b[A", false},
		{"\x1bOB", "\x1bOB", false},
		{"\x1bx", "x", false},
		{"abc\x04", "abc\x04", false},
	}
	for _, tt := range tests {
		r := &keyReader{ctx: context.Background()}
		if got := string(r.translate([]byte(tt.in))); got != tt.want || r.dismissed != tt.dismissed {
			t.Errorf("translate(%q) = %q dismissed %v; want %q, %v", tt.in, got, r.dismissed, tt.want, tt.dismissed)
		}
	}
}
