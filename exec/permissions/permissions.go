// Package permissions decides which tool calls run without asking, which ask
// a person every time and which never run (DESIGN §7). Rules use cagent's
// syntax: a bare tool name ("user_prompt", "shell", globs allowed) or a tool
// name with argument globs ("shell:cmd=git status*", "shell:cmd=ls*:cwd=/tmp*").
//
// Shell lines are parsed (mvdan.cc/sh/v3/syntax) and each simple command is
// checked on its own. Deny wins over ask over allow. Deny is best effort: a
// determined command can hide from any pattern.
package permissions

import (
	"fmt"
	"regexp"
	"strings"
)

// Decision is what the rules say about a call.
type Decision int

const (
	// None: no rule decides. A shell command is asked (or run under
	// --yolo); any other tool runs.
	None Decision = iota
	// Allow: run without asking.
	Allow
	// Ask: ask a person every time, even under --yolo.
	Ask
	// Deny: never run.
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return "none"
}

// Verdict is a decision with what led to it.
type Verdict struct {
	Decision Decision
	// Rule is the rule that decided (deny, ask, or a bare allow), as written.
	Rule string
	// Reason says why a shell line was not auto-allowed when Decision is
	// None (it does not parse, it redirects to a file, a command matches no
	// allow rule, ...).
	Reason string
}

// Rule is one parsed permission pattern.
type Rule struct {
	Text string
	tool *regexp.Regexp
	// args are the argument globs, by lower-case argument name, in the
	// order written.
	args []argGlob
}

type argGlob struct {
	name string
	glob *regexp.Regexp
}

// ParseRule parses one pattern: TOOL or TOOL:ARG=GLOB[:ARG=GLOB...]. As in
// cagent, the tool part ends at the first ":NAME=" segment, so tool names
// holding colons (mcp:github:create_issue) still work.
func ParseRule(text string) (Rule, error) {
	r := Rule{Text: text}
	if strings.TrimSpace(text) == "" {
		return r, fmt.Errorf("empty rule; expected a tool name or TOOL:ARG=GLOB such as shell:cmd=git status*")
	}
	parts := strings.Split(text, ":")
	toolParts := []string{parts[0]}
	for _, p := range parts[1:] {
		key, val, found := strings.Cut(p, "=")
		switch {
		case found && key != "":
			if strings.TrimSpace(key) != key || !validArgName(key) {
				return r, fmt.Errorf("rule %q: %q is not an argument name", text, key)
			}
			r.args = append(r.args, argGlob{name: strings.ToLower(key), glob: compileGlob(val)})
		case len(r.args) == 0:
			toolParts = append(toolParts, p)
		default:
			return r, fmt.Errorf("rule %q: %q after an argument pattern has no ARG=; write TOOL:ARG=GLOB:ARG=GLOB", text, p)
		}
	}
	tool := strings.Join(toolParts, ":")
	if strings.TrimSpace(tool) == "" {
		return r, fmt.Errorf("rule %q names no tool; expected TOOL or TOOL:ARG=GLOB", text)
	}
	r.tool = compileGlob(tool)
	return r, nil
}

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
func compileGlob(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?is)\A`)
	rs := []rune(glob)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 < len(rs) {
				i++
				b.WriteString(regexp.QuoteMeta(string(rs[i])))
			} else {
				b.WriteString(`\\`)
			}
		case '[':
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
	b.WriteString(`\z`)
	return regexp.MustCompile(b.String())
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

// Checker applies an agent file's permissions.
type Checker struct {
	allow, ask, deny []Rule
}

// New parses the rules; an error names the list and the bad rule.
func New(allow, ask, deny []string) (*Checker, error) {
	c := &Checker{}
	lists := []struct {
		name  string
		texts []string
		out   *[]Rule
	}{{"allow", allow, &c.allow}, {"ask", ask, &c.ask}, {"deny", deny, &c.deny}}
	for _, l := range lists {
		for i, t := range l.texts {
			r, err := ParseRule(t)
			if err != nil {
				return nil, fmt.Errorf("permissions.%s[%d]: %w", l.name, i, err)
			}
			*l.out = append(*l.out, r)
		}
	}
	return c, nil
}

// Gates reports whether an ask or deny rule can apply to tool: such a tool
// must go through Tool before it runs.
func (c *Checker) Gates(tool string) bool {
	if c == nil {
		return false
	}
	for _, list := range [][]Rule{c.ask, c.deny} {
		for _, r := range list {
			if r.tool.MatchString(tool) {
				return true
			}
		}
	}
	return false
}

// Tool decides a call of a tool other than shell: Deny or Ask when a rule
// says so, else Allow when an allow rule matches, else None (it runs).
func (c *Checker) Tool(tool string, args map[string]any) Verdict {
	if c == nil {
		return Verdict{}
	}
	for _, l := range []struct {
		rules []Rule
		d     Decision
	}{{c.deny, Deny}, {c.ask, Ask}, {c.allow, Allow}} {
		for _, r := range l.rules {
			if r.tool.MatchString(tool) && r.matchArgs(args, nil) {
				return Verdict{Decision: l.d, Rule: r.Text}
			}
		}
	}
	return Verdict{}
}

// matchArgs reports whether every argument glob of r matches args. cmd, when
// the rule has one, is matched by cmdMatch instead (shell's per-command
// matching); cmdMatch nil matches cmd like any other argument.
func (r Rule) matchArgs(args map[string]any, cmdMatch func(*regexp.Regexp) bool) bool {
	for _, a := range r.args {
		if a.name == "cmd" && cmdMatch != nil {
			if !cmdMatch(a.glob) {
				return false
			}
			continue
		}
		v, ok := lookupArg(args, a.name)
		if !ok || !a.glob.MatchString(argString(v)) {
			return false
		}
	}
	return true
}

func (r Rule) hasArgs() bool { return len(r.args) > 0 }

func lookupArg(args map[string]any, name string) (any, bool) {
	if v, ok := args[name]; ok {
		return v, true
	}
	for k, v := range args {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// argString is an argument value as text, as cagent formats it.
func argString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprintf("%d", int64(x))
		}
		return fmt.Sprintf("%g", x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
