// Package termtext makes untrusted text (from a model or a tool server) safe
// to draw on a terminal: control and bidi characters are shown as visible
// escapes, never dropped, so what a person reads and approves is what runs.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that could move the cursor, change
// colours or reorder text replaced by a visible escape (\x1b, \u202e). Newlines
// and tabs are kept when keepLines is true.
func Escape(s string, keepLines bool) string {
	return escape(s, keepLines, true)
}

// JSON escapes JSON text for one line: JSON already writes a backslash as
// \\ and control characters as \n or \u001b, so its backslashes are kept
// as they are (escaping them again would double them); what JSON leaves
// raw (bidi and format characters, invalid UTF-8) is escaped.
func JSON(s string) string { return escape(s, false, false) }

func escape(s string, keepLines, backslash bool) string {
	if isPlain(s, keepLines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\\' && backslash:
			b.WriteString(`\\`)
		case unsafe(r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else if r <= 0xffff {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// Line escapes s for a single line: newlines become \n too.
func Line(s string) string { return Escape(s, false) }

// Text escapes s keeping its newlines and tabs.
func Text(s string) string { return Escape(s, true) }

func isPlain(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == '\\' || c == 0x7f || (c < 0x20 && !(keepLines && (c == '\n' || c == '\t'))) {
			return false
		}
	}
	return true
}

// unsafe reports characters that are not graphic, or that reorder text
// (bidi controls), or are invisible format characters.
func unsafe(r rune) bool {
	if r == ' ' {
		return false
	}
	if unicode.Is(unicode.Bidi_Control, r) || unicode.In(r, unicode.Cf) {
		return true
	}
	return !unicode.IsGraphic(r)
}

// Shorten cuts s to at most max bytes, at a character boundary, and marks
// the cut with "…"; it returns s when it fits, and the number of bytes cut.
func Shorten(s string, max int) (string, int) {
	if len(s) <= max {
		return s, 0
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…", len(s) - cut
}
