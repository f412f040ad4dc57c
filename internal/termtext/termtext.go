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
// colours or reorder text replaced by a visible escape (\x1b, \u202e), and
// nothing else changed: a backslash, a quote or any printable character is
// itself, so what a person reads is what runs (printf 'a\nb' is shown so).
// Newlines and tabs are kept when keepLines is true.
func Escape(s string, keepLines bool) string {
	return escape(s, keepLines, false)
}

// EscapeTerminal is Escape for a terminal: each escape is drawn in reverse
// video, which printable text cannot imitate (a literal "\x1b" typed by the
// model is drawn plain).
func EscapeTerminal(s string, keepLines bool) string {
	return escape(s, keepLines, true)
}

// JSON escapes JSON text for one line: what JSON leaves raw (bidi and
// format characters, invalid UTF-8) is escaped; its own escapes stay.
func JSON(s string) string { return escape(s, false, false) }

// Reverse video on, and off: how a terminal marks an escape.
const (
	markOn  = "\x1b[7m"
	markOff = "\x1b[27m"
)

func escape(s string, keepLines, mark bool) string {
	if isPlain(s, keepLines) {
		return s
	}
	on, off := "", ""
	if mark {
		on, off = markOn, markOff
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, on+`\x%02x`+off, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case unsafe(r):
			if r < 0x80 {
				fmt.Fprintf(&b, on+`\x%02x`+off, r)
			} else if r <= 0xffff {
				fmt.Fprintf(&b, on+`\u%04x`+off, r)
			} else {
				fmt.Fprintf(&b, on+`\U%08x`+off, r)
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

// LineTerminal and TextTerminal are Line and Text for a terminal (reverse
// video escapes).
func LineTerminal(s string) string { return EscapeTerminal(s, false) }

func TextTerminal(s string) string { return EscapeTerminal(s, true) }

func isPlain(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == 0x7f || (c < 0x20 && !(keepLines && (c == '\n' || c == '\t'))) {
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
