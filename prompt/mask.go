package prompt

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Masked is what a secret value becomes in text that must not carry it.
const Masked = "***"

// maskValues hides secret values in text (DESIGN §5): every occurrence of
// a whole value and of each of its whitespace-separated parts of 4
// characters or more; a value (or part) shorter than 4 characters only
// where it stands as a whole token, neither preceded nor followed by a
// letter or a digit, so "pin=Qz7" loses "Qz7" but "Qz7x" keeps it. Each
// needle is also looked for as it appears inside a JSON string (a tool
// echoing its arguments), and longer needles are masked first, so a part
// never leaves the rest of its value behind.
func maskValues(text string, values []string) string {
	type needle struct {
		s     string
		token bool // short: masked only as a whole token
	}
	seen := map[string]bool{}
	var needles []needle
	add := func(s string) {
		if s == "" || seen[s] {
			return
		}
		seen[s] = true
		needles = append(needles, needle{s, utf8.RuneCountInString(s) < 4})
	}
	for _, v := range values {
		if strings.TrimSpace(v) == "" {
			continue
		}
		forms := []string{v}
		if q, err := json.Marshal(v); err == nil && string(q[1:len(q)-1]) != v {
			forms = append(forms, string(q[1:len(q)-1]))
		}
		for _, f := range forms {
			add(f)
			parts := strings.Fields(f)
			if len(parts) == 1 && parts[0] != f {
				add(parts[0]) // the value with its surrounding blanks gone
			}
			for _, p := range parts {
				if len(parts) > 1 && utf8.RuneCountInString(p) < 4 {
					continue // short words of a longer value: too common to hide
				}
				add(p)
			}
		}
	}
	sort.SliceStable(needles, func(i, j int) bool { return len(needles[i].s) > len(needles[j].s) })
	for _, n := range needles {
		if !strings.Contains(text, n.s) {
			continue
		}
		if !n.token {
			text = strings.ReplaceAll(text, n.s, Masked)
			continue
		}
		text = replaceTokens(text, n.s)
	}
	return text
}

// replaceTokens replaces the occurrences of s in text that are neither
// preceded nor followed by a letter or a digit.
func replaceTokens(text, s string) string {
	var b strings.Builder
	start := 0 // text[:start] is written
	for from := 0; ; {
		i := strings.Index(text[from:], s)
		if i < 0 {
			b.WriteString(text[start:])
			return b.String()
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(s):])
		if !wordRune(before) && !wordRune(after) {
			b.WriteString(text[start:i])
			b.WriteString(Masked)
			start = i + len(s)
		}
		from = i + len(s)
	}
}

func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
