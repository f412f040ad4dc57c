package permissions

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// unescape removes the backslashes that quote the next character (outside
// quotes any character; inside double quotes only $ ` " \ and newline).
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			next := s[i+1]
			if !quoted || strings.IndexByte("$`\"\\\n", next) >= 0 {
				i++
				if next != '\n' {
					b.WriteByte(next)
				}
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// literalWord reports whether word has no expansion at all.
func literalWord(word *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range word.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(lit.Value, true))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// safeRedirect: to or from /dev/null (<, >, >>, >|, <>, &>, &>>), or
// between descriptors 0-2 (2>&1, >&2, <&0), on descriptors 0-2. Never a
// file, /dev/tcp or /dev/udp, or a {var}> that assigns a variable.
func safeRedirect(r *syntax.Redirect) bool {
	if r.N != nil && !stdFD(r.N.Value) {
		return false
	}
	if r.Word == nil {
		return false
	}
	word, ok := literalWord(r.Word)
	if !ok {
		return false
	}
	switch r.Op {
	case syntax.DplIn, syntax.DplOut:
		return stdFD(word)
	case syntax.RdrIn, syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrInOut:
		return word == "/dev/null"
	}
	return false
}

func stdFD(s string) bool { return s == "0" || s == "1" || s == "2" }
