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

	"github.com/hitl-dev/hitl/exec/permissions/rule"
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

// ParseRule parses one pattern (rule.Parse): TOOL or
// TOOL:ARG=GLOB[:ARG=GLOB...].
func ParseRule(text string) (Rule, error) {
	p, err := rule.Parse(text)
	if err != nil {
		return Rule{Text: text}, err
	}
	r := Rule{Text: text, tool: p.Tool}
	for _, a := range p.Args {
		r.args = append(r.args, argGlob{name: a.Name, glob: a.Glob})
	}
	return r, nil
}

// Checker applies an agent file's permissions.
type Checker struct {
	allow, ask, deny []Rule
	// network are permissions.network: the commands run unasked that
	// keep the network.
	network []Rule
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

// WithNetwork adds permissions.network's rules; an error names the bad
// one.
func (c *Checker) WithNetwork(texts []string) error {
	for i, t := range texts {
		r, err := ParseRule(t)
		if err != nil {
			return fmt.Errorf("permissions.network[%d]: %w", i, err)
		}
		c.network = append(c.network, r)
	}
	return nil
}

// Allows reports whether an allow rule can apply to tool: it may run
// something unasked.
func (c *Checker) Allows(tool string) bool {
	if c == nil {
		return false
	}
	for _, r := range c.allow {
		if r.tool.MatchString(tool) {
			return true
		}
	}
	return false
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
	return c.ToolParts(tool, args, nil)
}

// ToolParts is Tool for a call whose parts the model set (an HTTP
// request's path, query, header.NAME, cookie.NAME, body): an allow rule
// with arguments admits it only when it judges each part (names it, or url
// for path and query); one that does not leaves the call to a person,
// with the Reason saying which part. A bare allow rule (the tool's name
// alone) admits every call, as it does for any tool.
func (c *Checker) ToolParts(tool string, args map[string]any, parts []string) Verdict {
	if c == nil {
		return Verdict{}
	}
	var unjudged Verdict
	for _, l := range []struct {
		rules []Rule
		d     Decision
	}{{c.deny, Deny}, {c.ask, Ask}, {c.allow, Allow}} {
		for _, r := range l.rules {
			if !r.tool.MatchString(tool) || !r.matchArgs(args, nil, l.d == Allow) {
				continue
			}
			if l.d == Allow {
				if part := r.unjudged(parts); part != "" {
					if unjudged.Reason == "" {
						unjudged.Reason = fmt.Sprintf("the rule %q does not judge %s, which the model set", r.Text, part)
					}
					continue
				}
			}
			return Verdict{Decision: l.d, Rule: r.Text}
		}
	}
	return unjudged
}

// unjudged is the first of parts an argument rule r does not judge ("":
// it judges all, or it is a bare rule).
func (r Rule) unjudged(parts []string) string {
	if !r.hasArgs() {
		return ""
	}
	for _, p := range parts {
		if !r.names(p) && !((p == "path" || p == "query") && r.names("url")) {
			return p
		}
	}
	return ""
}

func (r Rule) names(arg string) bool {
	for _, a := range r.args {
		if strings.EqualFold(a.name, arg) {
			return true
		}
	}
	return false
}

// matchArgs reports whether every argument glob of r matches args. cmd, when
// the rule has one, is matched by cmdMatch instead (shell's per-command
// matching); cmdMatch nil matches cmd like any other argument.
//
// A list argument (fetch's urls, create_directory's paths) matches an
// allow rule (every true) only when each of its items matches, and a deny
// or ask rule when any item does: one URL a rule does not allow is enough
// to ask, one it denies enough to deny.
func (r Rule) matchArgs(args map[string]any, cmdMatch func(*regexp.Regexp) bool, every bool) bool {
	for _, a := range r.args {
		if a.name == "cmd" && cmdMatch != nil {
			if !cmdMatch(a.glob) {
				return false
			}
			continue
		}
		v, ok := lookupArg(args, a.name)
		if !ok || !matchValue(a.glob, v, every) {
			return false
		}
	}
	return true
}

func matchValue(glob *regexp.Regexp, v any, every bool) bool {
	list, ok := v.([]any)
	if !ok {
		return glob.MatchString(argString(v))
	}
	if len(list) == 0 {
		return !every && glob.MatchString("")
	}
	for _, item := range list {
		if glob.MatchString(argString(item)) != every {
			return !every
		}
	}
	return every
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
