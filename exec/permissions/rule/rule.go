// Package rule is the syntax of a permissions rule (DESIGN §7): a bare tool
// name ("user_prompt", "shell", globs allowed) or a tool name with argument
// globs ("shell:cmd=git status*", "shell:cmd=ls*:cwd=/tmp*"). It imports
// nothing of hitl, so that config can check rules where they are written
// while exec/permissions applies them.
package rule

import (
	"fmt"
	"regexp"
	"strings"
)

// Rule is one parsed pattern.
type Rule struct {
	Text string
	// ToolGlob is the tool part as written; Tool matches the tool name
	// with it (case-insensitive, whole name).
	ToolGlob string
	Tool     *regexp.Regexp
	// Args are the argument globs, by lower-case argument name, in the
	// order written.
	Args []Arg
}

// Arg is one ARG=GLOB of a rule.
type Arg struct {
	Name string
	Glob *regexp.Regexp
}

// Parse parses one pattern: TOOL or TOOL:ARG=GLOB[:ARG=GLOB...]. As in
// cagent, the tool part ends at the first ":NAME=" segment, so tool names
// holding colons (mcp:github:create_issue) still work; an argument's glob
// runs to the next ":NAME=" segment, so globs may hold colons
// (fetch:urls=http://127.0.0.1:8080/*).
func Parse(text string) (Rule, error) {
	r := Rule{Text: text}
	if strings.TrimSpace(text) == "" {
		return r, fmt.Errorf("empty rule; expected a tool name or TOOL:ARG=GLOB such as shell:cmd=git status*")
	}
	parts := strings.Split(text, ":")
	toolParts := []string{parts[0]}
	var names, globs []string
	for _, p := range parts[1:] {
		key, val, found := strings.Cut(p, "=")
		switch {
		case found && key != "" && validArgName(key):
			names, globs = append(names, strings.ToLower(key)), append(globs, val)
		case len(names) > 0:
			globs[len(globs)-1] += ":" + p
		case found && key != "":
			return r, fmt.Errorf("rule %q: %q is not an argument name", text, key)
		default:
			toolParts = append(toolParts, p)
		}
	}
	for i, name := range names {
		g := compileGlob(globs[i])
		if name == "url" || name == "urls" {
			g = compileURLGlob(globs[i])
		}
		r.Args = append(r.Args, Arg{Name: name, Glob: g})
	}
	tool := strings.Join(toolParts, ":")
	if strings.TrimSpace(tool) == "" {
		return r, fmt.Errorf("rule %q names no tool; expected TOOL or TOOL:ARG=GLOB", text)
	}
	r.ToolGlob = tool
	r.Tool = compileGlob(tool)
	return r, nil
}

// HasGlob reports whether the rule's tool part holds glob characters.
func (r Rule) HasGlob() bool { return strings.ContainsAny(r.ToolGlob, "*?[") }

func validArgName(s string) bool {
	for _, c := range s {
		if !(c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// compileGlob turns a glob into a case-insensitive regexp matching the whole
// text: * is any characters (including / and spaces, and newlines), ? one
// character, [abc] / [!abc] a class, \x a literal x.
// MatchPath reports whether path matches glob in the rules' syntax (* any
// characters, / included; ? one; [abc] a class; \* a literal star), whole
// and with case: unlike a rule, a directory named in another case is
// another directory.
func MatchPath(glob, path string) bool {
	re, err := regexp.Compile(`(?s)\A` + globRegexp(glob, false) + `\z`)
	return err == nil && re.MatchString(path)
}

func compileGlob(glob string) *regexp.Regexp {
	return regexp.MustCompile(`(?is)\A` + globRegexp(glob, false) + `\z`)
}

// compileURLGlob is compileGlob for a URL (url=, urls=): in the host part
// of the pattern (between :// and the first /, ? or #), * and ? never match
// across /, ?, #, @ or \, so http://*.docs.example.com/* never admits
// http://127.0.0.1:8080/?.docs.example.com/ (DESIGN §12). A pattern
// without :// is an ordinary glob.
func compileURLGlob(glob string) *regexp.Regexp {
	scheme, rest, ok := strings.Cut(glob, "://")
	if !ok {
		return compileGlob(glob)
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
		if strings.HasSuffix(rest, "*") && !strings.HasSuffix(rest, `\*`) {
			end-- // https://* : the last * is the rest of any URL
		}
	}
	return regexp.MustCompile(`(?is)\A` + globRegexp(scheme, false) + `://` + globRegexp(rest[:end], true) + globRegexp(rest[end:], false) + `\z`)
}

// globRegexp is the regexp of a glob; within a host, * and ? stay in it.
func globRegexp(glob string, host bool) string {
	var b strings.Builder
	rs := []rune(glob)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '*' && host:
			b.WriteString(`[^/?#@\\]*`)
		case c == '?' && host:
			b.WriteString(`[^/?#@\\]`)
		case c == '*':
			b.WriteString(`.*`)
		case c == '?':
			b.WriteString(`.`)
		case c == '\\':
			if i+1 < len(rs) {
				i++
				b.WriteString(regexp.QuoteMeta(string(rs[i])))
			} else {
				b.WriteString(`\\`)
			}
		case c == '[':
			if class, n, ok := globClass(rs[i:]); ok {
				b.WriteString(class)
				i += n - 1
			} else {
				b.WriteString(`\[`)
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// globClass translates a [...] class at the start of rs; n is its length.
func globClass(rs []rune) (class string, n int, ok bool) {
	var b strings.Builder
	b.WriteString("[")
	i := 1
	if i < len(rs) && (rs[i] == '!' || rs[i] == '^') {
		b.WriteString("^")
		i++
	}
	start := i
	for ; i < len(rs); i++ {
		c := rs[i]
		if c == ']' && i > start {
			b.WriteString("]")
			return b.String(), i + 1, true
		}
		switch {
		case c == '-' && i > start && i+1 < len(rs) && rs[i+1] != ']':
			b.WriteRune('-')
		case c == '\\' && i+1 < len(rs):
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return "", 0, false
}
