package tty

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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
	// The escape is drawn in reverse video: text cannot imitate it.
	want := "(2 of 3) [H] T\n  Pick\n  one\x1b[7m\\x1b\x1b[27m[2J (Esc to dismiss)\n  a    hint"
	if got := formatMessage(q, dismissTag); got != want {
		t.Errorf("formatMessage =\n%q\nwant\n%q", got, want)
	}
	if got := summaryMessage(q); got != "(2 of 3) [H] T\n  Pick\n  one\x1b[7m\\x1b\x1b[27m[2J" {
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

func TestFitKeepsBothEnds(t *testing.T) {
	cmd := []string{"? Run this command? (Esc to dismiss)", "  rm -rf / && cat <<EOF"}
	for i := range 80 {
		cmd = append(cmd, fmt.Sprintf("harmless line %d", i))
	}
	cmd = append(cmd, "EOF")
	wide := strings.Repeat("x", 500) + " rm -rf ~"
	tests := []struct {
		name       string
		lines      []string
		rows, cols int
		want       []string // lines that must be shown
		maxLines   int
	}{
		{"fits", []string{"a", "b"}, 30, 80, []string{"a", "b"}, 2},
		{"tall", cmd, 30, 80, []string{cmd[0], cmd[1], "… ", "harmless line 79", "EOF"}, 30},
		{"tiny terminal", cmd, 2, 80, []string{cmd[0], "EOF", "left out"}, 5},
		{"wide last line", []string{"first", wide}, 10, 40, []string{"first", "rm -rf ~", "characters left out"}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fit(tt.lines, tt.rows, tt.cols)
			joined := strings.Join(got, "\n")
			for _, w := range tt.want {
				if !strings.Contains(joined, w) {
					t.Errorf("fit lacks %q:\n%s", w, joined)
				}
			}
			rows := 0
			for _, l := range got {
				rows += rowsOf(l, tt.cols-indent)
			}
			if rows > max(tt.rows, minRows) || len(got) > tt.maxLines {
				t.Errorf("fit takes %d rows in %d lines, want at most %d rows:\n%s", rows, len(got), tt.rows, joined)
			}
		})
	}
}

func TestDrawsText(t *testing.T) {
	for in, want := range map[string]bool{
		"\x1b[0G\x1b[2K": false, "\x1b7": false, "\x1b[6n": false, "": false,
		"\x1b[1;92m? \x1b[0mWhich": true, "x": true,
	} {
		if got := drawsText([]byte(in)); got != want {
			t.Errorf("drawsText(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestKeepReplies(t *testing.T) {
	if got := string(keepReplies([]byte("y\r\x1b[12;3R\x03n"), false)); got != "\x1b[12;3R" {
		t.Errorf("keepReplies = %q", got)
	}
	if got := string(keepReplies([]byte("y\r\x1b[12;3R\x03n"), true)); got != "\x1b[12;3R\x03" {
		t.Errorf("keepReplies with interrupts = %q", got)
	}
}
