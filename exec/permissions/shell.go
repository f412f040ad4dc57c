package permissions

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Dialect is the language of the shell that runs a line: a line is parsed
// as that shell would read it.
type Dialect int

const (
	// DialectUnknown: a shell hitl cannot parse exactly (zsh, ksh, a
	// shell it cannot find). Lines are parsed as bash for deny and ask
	// rules, and never allowed without asking.
	DialectUnknown Dialect = iota
	// DialectPOSIX: dash and other POSIX shells.
	DialectPOSIX
	// DialectBash: bash.
	DialectBash
)

func (d Dialect) String() string {
	switch d {
	case DialectPOSIX:
		return "posix"
	case DialectBash:
		return "bash"
	}
	return "unknown"
}

func (d Dialect) lang() syntax.LangVariant {
	if d == DialectPOSIX {
		return syntax.LangPOSIX
	}
	return syntax.LangBash
}

// ShellVerdict is a Verdict on a shell line.
type ShellVerdict struct {
	Verdict
	// Program is set when the line is allowed because each of its simple
	// commands matches an allow rule (not by a bare rule): it is the tree
	// that was checked, and the only form in which the line may run
	// unasked (interp, with Checker.Recheck before each command).
	Program *syntax.File
}

// Shell decides a call of the shell tool named tool: line is its cmd, args
// all of the call's arguments (for rules on cwd or timeout), d the dialect
// of the shell that would run it.
//
//   - Deny when any simple command of the line (nested ones included: inside
//     substitutions, sh -c strings, eval, sudo/env/xargs/... wrappers, and
//     each brace expansion), or the whole line, matches a deny rule.
//   - Ask when the same holds for an ask rule.
//   - Allow when a bare rule allows the tool ("shell"); the line then runs
//     in the toolset's shell as written.
//   - Allow with Program when the line parses in d, meets every condition
//     of DESIGN §7 (see Analysis.Unsafe) and every simple command matches an
//     allow rule.
//   - None otherwise, with the reason.
func (c *Checker) Shell(tool, line string, args map[string]any, d Dialect) ShellVerdict {
	if c == nil {
		return ShellVerdict{Verdict: Verdict{Reason: "no permissions rule allows it"}}
	}
	a := AnalyzeIn(line, d)
	views := []*Analysis{a}
	if d != DialectBash {
		// Deny and ask rules also see the line as bash reads it: a
		// wider grammar, so a command the dialect hides is still seen.
		views = append(views, AnalyzeIn(line, DialectBash))
	}
	matchAny := func(g *regexp.Regexp) bool {
		for _, v := range views {
			if v.matchAny(g) {
				return true
			}
		}
		return false
	}
	for _, l := range []struct {
		rules []Rule
		d     Decision
	}{{c.deny, Deny}, {c.ask, Ask}} {
		for _, r := range l.rules {
			if r.tool.MatchString(tool) && r.matchArgs(args, matchAny, false) {
				return ShellVerdict{Verdict: Verdict{Decision: l.d, Rule: r.Text}}
			}
		}
	}
	for _, r := range c.allow {
		if !r.hasArgs() && r.tool.MatchString(tool) {
			return ShellVerdict{Verdict: Verdict{Decision: Allow, Rule: r.Text}}
		}
	}
	none := func(format string, args ...any) ShellVerdict {
		return ShellVerdict{Verdict: Verdict{Reason: fmt.Sprintf(format, args...)}}
	}
	switch {
	case d == DialectUnknown:
		return none("hitl cannot parse lines exactly as the toolset's shell reads them (only dash and bash), so no line is allowed without asking")
	case a.ParseErr != nil:
		return none("the line does not parse as %s reads it (%v), so it is never allowed without asking", d.shellName(), a.ParseErr)
	case len(a.Unsafe) > 0:
		return none("the line %s, so it is never allowed without asking", a.Unsafe[0])
	case len(a.Commands) == 0:
		return none("the line runs no command")
	case len(c.allow) == 0:
		return none("no permissions rule allows it")
	}
	for _, cmd := range a.Commands {
		if !c.allowed(tool, cmd, args) {
			return none("%q matches no allow rule", cmd.Text)
		}
	}
	return ShellVerdict{Verdict: Verdict{Decision: Allow}, Program: a.File}
}

func (d Dialect) shellName() string {
	if d == DialectPOSIX {
		return "/bin/sh (POSIX)"
	}
	return "bash"
}

// allowed: every form of cmd (as written, quotes removed, each brace
// expansion) matches one allow rule.
func (c *Checker) allowed(tool string, cmd Command, args map[string]any) bool {
	for _, r := range c.allow {
		if r.tool.MatchString(tool) && r.matchArgs(args, cmd.matchAllow, true) {
			return true
		}
	}
	return false
}

// Recheck judges one command just before it runs, as the interpreter
// expanded it (globs, ~, braces): argv must not match a deny or ask rule
// (nor its hidden commands), must run no nested shell, must not name a
// secret placeholder, and must match an allow rule. args are the call's
// arguments. The error says why the command may not run.
func (c *Checker) Recheck(tool string, argv []string, args map[string]any) error {
	if len(argv) == 0 {
		return nil
	}
	if c == nil {
		return errors.New("no permissions rule allows it")
	}
	cmd := Command{Text: strings.Join(argv, " "), Words: argv}
	a := &Analysis{Line: cmd.Text}
	w := &walker{a: a}
	w.add(cmd)
	w.hiddenCommands(argv, 0)
	for _, l := range []struct {
		rules []Rule
		what  string
	}{{c.deny, "denied"}, {c.ask, "asked every time"}} {
		for _, r := range l.rules {
			if r.tool.MatchString(tool) && r.matchArgs(args, a.matchAny, false) {
				return fmt.Errorf("%q is %s by the permissions rule %q", cmd.Text, l.what, r.Text)
			}
		}
	}
	if why := nested(argv, 0); why != "" {
		return fmt.Errorf("%q %s", cmd.Text, why)
	}
	if secretRef(cmd.Text) {
		return fmt.Errorf("%q names a secret placeholder", cmd.Text)
	}
	for _, r := range c.allow {
		if r.hasArgs() && r.tool.MatchString(tool) && r.matchArgs(args, cmd.matchAllow, true) {
			return nil
		}
	}
	return fmt.Errorf("%q matches no allow rule", cmd.Text)
}

// Network says whether a command run unasked (argv, with the call's
// arguments args) keeps the network: a permissions.network rule with a cmd
// matches it as an allow rule would.
func (c *Checker) Network(tool string, argv []string, args map[string]any) bool {
	if c == nil || len(argv) == 0 {
		return false
	}
	cmd := Command{Text: strings.Join(argv, " "), Words: argv}
	for _, r := range c.network {
		if r.hasArgs() && r.tool.MatchString(tool) && r.matchArgs(args, cmd.matchAllow, true) {
			return true
		}
	}
	return false
}

// secretRef reports whether s names a secret variable.
func secretRef(s string) bool {
	return strings.Contains(strings.ToUpper(s), "HITL_SECRET_")
}
