package permissions

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shell decides a call of the shell tool named tool: line is its cmd, args
// all of the call's arguments (for rules on cwd or timeout).
//
//   - Deny when any simple command of the line (nested ones included: inside
//     substitutions, sh -c strings, eval, sudo/env/xargs/... wrappers), or
//     the whole line, matches a deny rule.
//   - Ask when the same holds for an ask rule.
//   - Allow when a bare rule allows the tool ("shell"), or when the line
//     parses, is plain (see Analysis.Unsafe) and every simple command matches
//     an allow rule.
//   - None otherwise, with the reason.
func (c *Checker) Shell(tool, line string, args map[string]any) Verdict {
	if c == nil {
		return Verdict{Reason: "no permissions rule allows it"}
	}
	a := Analyze(line)
	for _, l := range []struct {
		rules []Rule
		d     Decision
	}{{c.deny, Deny}, {c.ask, Ask}} {
		for _, r := range l.rules {
			if r.tool.MatchString(tool) && r.matchArgs(args, a.matchAny, false) {
				return Verdict{Decision: l.d, Rule: r.Text}
			}
		}
	}
	for _, r := range c.allow {
		if !r.hasArgs() && r.tool.MatchString(tool) {
			return Verdict{Decision: Allow, Rule: r.Text}
		}
	}
	switch {
	case a.ParseErr != nil:
		return Verdict{Reason: fmt.Sprintf("the line does not parse (%v), so it is never allowed without asking", a.ParseErr)}
	case len(a.Unsafe) > 0:
		return Verdict{Reason: "the line " + a.Unsafe[0] + ", so it is never allowed without asking"}
	case len(a.Commands) == 0:
		return Verdict{Reason: "the line runs no command"}
	case len(c.allow) == 0:
		return Verdict{Reason: "no permissions rule allows it"}
	}
	for _, cmd := range a.Commands {
		if !c.allowed(tool, cmd, args) {
			return Verdict{Reason: fmt.Sprintf("%q matches no allow rule", cmd.Text)}
		}
	}
	return Verdict{Decision: Allow}
}

func (c *Checker) allowed(tool string, cmd Command, args map[string]any) bool {
	for _, r := range c.allow {
		if r.tool.MatchString(tool) && r.matchArgs(args, cmd.matchAllow, true) {
			return true
		}
	}
	return false
}

// Analysis is what a shell line does, as far as parsing can tell.
type Analysis struct {
	Line string
	// ParseErr is set when the line does not parse (as bash).
	ParseErr error
	// Commands are the simple commands of the line, in order, nested ones
	// included (inside substitutions, subshells, blocks).
	Commands []Command
	// Hidden are commands found inside others: the inner command of a
	// wrapper (sudo rm, xargs rm, env X=1 rm, find -exec rm), the commands
	// of an sh -c string or of eval. Only deny and ask rules look at them.
	Hidden []Command
	// Unsafe lists what keeps the line from being allowed without asking:
	// a redirection to a file, a variable assignment, a command or process
	// substitution, a nested shell, a background job, a compound command.
	Unsafe []string

	hiddenBytes int
}

// Command is one simple command.
type Command struct {
	// Text is the command as written in the line.
	Text string
	// Words are its words with quotes removed; expansions ($X) are kept as
	// written.
	Words []string
}

// matchAllow matches an allow glob against the command as written or with
// its quotes removed.
func (c Command) matchAllow(g *regexp.Regexp) bool {
	return g.MatchString(c.Text) || g.MatchString(strings.Join(c.Words, " "))
}

// matchDeny also tries the command name without its directory (/bin/rm).
func (c Command) matchDeny(g *regexp.Regexp) bool {
	if c.matchAllow(g) {
		return true
	}
	if len(c.Words) > 0 && strings.Contains(c.Words[0], "/") {
		w := append([]string{path.Base(c.Words[0])}, c.Words[1:]...)
		return g.MatchString(strings.Join(w, " "))
	}
	return false
}

// matchAny reports whether g matches the whole line or any command in it.
func (a *Analysis) matchAny(g *regexp.Regexp) bool {
	if g.MatchString(strings.TrimSpace(a.Line)) {
		return true
	}
	for _, list := range [][]Command{a.Commands, a.Hidden} {
		for _, c := range list {
			if c.matchDeny(g) {
				return true
			}
		}
	}
	return false
}

// maxDepth bounds the nesting of sh -c strings that Analyze looks into.
const maxDepth = 4

// Analyze parses line and collects its commands and what makes it unsafe to
// run unasked.
func Analyze(line string) *Analysis {
	a := &Analysis{Line: line}
	a.ParseErr = analyzeInto(a, line, 0, false)
	return a
}

func analyzeInto(a *Analysis, src string, depth int, hidden bool) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return err
	}
	w := &walker{a: a, src: src, depth: depth, hidden: hidden}
	syntax.Walk(f, w.visit)
	return nil
}

type walker struct {
	a      *Analysis
	src    string
	depth  int
	hidden bool // commands found go to Hidden
}

func (w *walker) unsafe(format string, args ...any) {
	if !w.hidden {
		w.a.Unsafe = append(w.a.Unsafe, fmt.Sprintf(format, args...))
	}
}

func (w *walker) text(n syntax.Node) string {
	start, end := n.Pos().Offset(), n.End().Offset()
	if start <= end && end <= uint(len(w.src)) {
		return w.src[start:end]
	}
	return ""
}

func (w *walker) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.Stmt:
		if n.Background || n.Coprocess || n.Disown {
			w.unsafe("runs a command in the background")
		}
	case *syntax.CallExpr:
		w.call(n)
	case *syntax.Redirect:
		if why := w.hdocRisk(n); why != "" {
			w.unsafe("%s", why)
		} else if !safeRedirect(n) {
			w.unsafe("redirects to a file (%s)", w.text(n))
		}
	case *syntax.SglQuoted:
		if n.Dollar {
			w.unsafe("has $'...' quoting (%s), which /bin/sh may read otherwise", w.text(n))
		}
	case *syntax.DblQuoted:
		if n.Dollar {
			w.unsafe("has $\"...\" quoting (%s), which /bin/sh may read otherwise", w.text(n))
		}
	case *syntax.ExtGlob:
		// *(...) is a pattern to bash, but to zsh (a toolset's shell:)
		// a glob qualifier: *(e:'touch x':) runs code.
		w.unsafe("has an extended glob (%s), which another shell may read as a command", w.text(n))
	case *syntax.CmdSubst:
		w.unsafe("has a command substitution (%s)", w.text(n))
	case *syntax.ProcSubst:
		w.unsafe("has a process substitution (%s)", w.text(n))
	case *syntax.ParamExp:
		if !simpleParam(n) {
			w.unsafe("has a parameter expansion with an operator (%s)", w.text(n))
		}
	case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
		w.unsafe("has arithmetic (%s)", w.text(n))
	case *syntax.DeclClause:
		w.add(Command{Text: w.text(n), Words: strings.Fields(w.text(n))})
		w.unsafe("declares or exports a variable (%s)", w.text(n))
	case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause,
		*syntax.FuncDecl, *syntax.TestClause, *syntax.CoprocClause, *syntax.TestDecl:
		w.unsafe("has a compound command (if, for, while, case, a function or [[ ]])")
	}
	return true
}

func (w *walker) add(c Command) {
	if w.hidden {
		w.addHidden(c)
	} else {
		w.a.Commands = append(w.a.Commands, c)
	}
}

func (w *walker) call(c *syntax.CallExpr) {
	if len(c.Assigns) > 0 {
		w.unsafe("assigns a variable (%s)", w.text(c.Assigns[0]))
	}
	if len(c.Args) == 0 {
		return
	}
	cmd := Command{Text: w.text(c)}
	for _, word := range c.Args {
		cmd.Words = append(cmd.Words, w.wordText(word))
	}
	w.add(cmd)
	if _, lit := literalWord(c.Args[0]); !lit {
		w.unsafe("runs a command whose name is not a plain word (%s)", w.text(c.Args[0]))
	}
	if why := nested(cmd.Words, 0); why != "" {
		w.unsafe("%s", why)
	}
	w.hiddenCommands(cmd.Words, w.depth)
}

// maxHidden and maxHiddenBytes bound the hidden commands collected from one
// line (a line of many nested wrappers would otherwise yield a great many
// tails).
const (
	maxHidden      = 256
	maxHiddenBytes = 4 << 20
)

// hiddenCommands records the commands a command runs on its behalf, for deny
// and ask rules: the inner commands of wrappers and the lines of sh -c and
// eval, parsed in turn.
func (w *walker) hiddenCommands(words []string, depth int) {
	if depth >= maxDepth {
		return
	}
	w.script(words, depth)
	for _, inner := range innerCommands(words) {
		if !w.addHidden(Command{Text: strings.Join(inner, " "), Words: inner}) {
			return
		}
		if wrappers[commandName(inner[0])] {
			// The tails of a wrapper inside a wrapper are tails of
			// words already: looking again would only multiply work.
			w.script(inner, depth)
			continue
		}
		w.hiddenCommands(inner, depth+1)
	}
}

// script parses the string of sh -c STRING or eval, into Hidden.
func (w *walker) script(words []string, depth int) {
	if script, ok := shellScript(words); ok {
		// A string that does not parse still reaches deny rules whole.
		if w.addHidden(Command{Text: script, Words: strings.Fields(script)}) {
			_ = analyzeInto(w.a, script, depth+1, true)
		}
	}
}

// addHidden records a hidden command unless the bounds are reached.
func (w *walker) addHidden(c Command) bool {
	if len(w.a.Hidden) >= maxHidden || w.a.hiddenBytes+len(c.Text) > maxHiddenBytes {
		return false
	}
	w.a.hiddenBytes += len(c.Text)
	w.a.Hidden = append(w.a.Hidden, c)
	return true
}

// wordText is a word with its quotes removed; expansions stay as written.
func (w *walker) wordText(word *syntax.Word) string {
	var b strings.Builder
	for _, p := range word.Parts {
		w.partText(&b, p, false)
	}
	return b.String()
}

func (w *walker) partText(b *strings.Builder, p syntax.WordPart, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(p.Value, quoted))
	case *syntax.SglQuoted:
		b.WriteString(p.Value)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			w.partText(b, q, true)
		}
	default:
		b.WriteString(w.text(p))
	}
}

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
				// $"..." is a quoted word in bash, but "$" then a
				// quoted word in dash (<<$"EOF" ends at a line $EOF).
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

// simpleParam reports whether p is $NAME or ${NAME}, without operators (some
// of which assign, or run commands through prompt expansion).
func simpleParam(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Flags == nil && !p.Excl && !p.Length && !p.Width && !p.IsSet &&
		p.NestedParam == nil && p.Index == nil && len(p.Modifiers) == 0 && p.Slice == nil &&
		p.Repl == nil && p.Names == 0 && p.Exp == nil
}

// hdocRisk says why a here-document could end elsewhere in the shell that
// runs the line than where the parser ends it, so that lines the parser
// takes for its body run as commands: a backslash-newline in the line (bash
// and dash join it before looking for the delimiter; the parser does not).
// A delimiter that is not a plain word ($"EOF" is "$EOF" to dash) is
// refused by safeRedirect.
func (w *walker) hdocRisk(r *syntax.Redirect) string {
	if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc {
		return ""
	}
	if strings.Contains(w.src, "\\\n") {
		return "has a here-document and a backslash-newline, which shells read differently"
	}
	return ""
}

// safeRedirect: duplicating descriptors (2>&1, >&2, <&-), input from a
// file, here-documents and here-strings, and output to /dev/null.
func safeRedirect(r *syntax.Redirect) bool {
	if r.N != nil && !allDigits(r.N.Value) {
		return false // {var}> assigns a variable
	}
	word := ""
	if r.Word != nil {
		var ok bool
		if word, ok = literalWord(r.Word); !ok && r.Op != syntax.RdrIn {
			return false
		}
	}
	switch r.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return true
	case syntax.DplIn, syntax.DplOut:
		// >&file is a redirection to a file in bash.
		return word == "-" || allDigits(word)
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
		return word == "/dev/null"
	}
	return false
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "fish": true, "csh": true, "tcsh": true, "yash": true, "posh": true,
}

// wrappers run the command given in their arguments.
var wrappers = map[string]bool{
	"exec": true, "command": true, "builtin": true, "env": true, "sudo": true, "doas": true,
	"nice": true, "nohup": true, "timeout": true, "stdbuf": true, "xargs": true, "time": true,
	"setsid": true, "ionice": true, "chroot": true, "busybox": true, "unbuffer": true,
	"flock": true, "watch": true, "strace": true, "ltrace": true, "taskset": true,
}

// commandName is the lower-case base name of a command word.
func commandName(word string) string {
	return strings.ToLower(path.Base(word))
}

// nested says why words run shell text that no rule can see: eval, source,
// a shell with -c or reading commands from its input, su -c, and the same
// inside a wrapper. It returns "" otherwise.
func nested(words []string, depth int) string {
	if why := nestedDirect(words); why != "" || depth >= maxDepth {
		return why
	}
	for _, inner := range innerCommands(words) {
		why := ""
		if wrappers[commandName(inner[0])] {
			why = nestedDirect(inner) // its tails are tails of words
		} else {
			why = nested(inner, depth+1)
		}
		if why != "" {
			return why
		}
	}
	return ""
}

func nestedDirect(words []string) string {
	if len(words) == 0 {
		return ""
	}
	switch name := commandName(words[0]); {
	case name == "eval" || name == "source" || name == ".":
		return fmt.Sprintf("runs shell text through %s", name)
	case shells[name] || name == "su":
		if _, ok := shellScript(words); ok {
			return fmt.Sprintf("runs a nested shell (%s -c)", name)
		}
		if shells[name] && !hasOperand(words[1:]) {
			return fmt.Sprintf("runs a nested shell reading commands from its input (%s)", name)
		}
	}
	return ""
}

// shellScript returns the command string of sh -c STRING (any shell, su, or
// a combined flag such as -ec), or eval's arguments.
func shellScript(words []string) (string, bool) {
	if len(words) == 0 {
		return "", false
	}
	name := commandName(words[0])
	if name == "eval" {
		return strings.Join(words[1:], " "), len(words) > 1
	}
	if !shells[name] && name != "su" {
		return "", false
	}
	for i := 1; i < len(words); i++ {
		wd := words[i]
		if wd == "--" || !strings.HasPrefix(wd, "-") && !strings.HasPrefix(wd, "+") {
			break
		}
		if takesArgument(wd) {
			i++
			continue
		}
		if wd == "--command" || !strings.HasPrefix(wd, "--") && strings.Contains(wd[1:], "c") {
			if i+1 < len(words) {
				return words[i+1], true
			}
			return "", true
		}
	}
	return "", false
}

// hasOperand reports whether a shell's arguments name a script to run
// (a word that is not an option); without one it reads commands from its
// input.
func hasOperand(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return i+1 < len(args)
		case a == "-s":
			return false
		case takesArgument(a):
			i++
		case !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+"):
			return true
		}
	}
	return false
}

// takesArgument: shell options whose value is the next word (set -o NAME,
// shopt -O NAME, --rcfile FILE).
func takesArgument(opt string) bool {
	switch opt {
	case "-o", "+o", "-O", "+O", "--rcfile", "--init-file":
		return true
	}
	return false
}

// innerCommands returns the commands that words may run on their behalf:
// for a wrapper every tail that starts with a word that is not an option
// (sudo -u root rm ...: "root ...", "rm ..."; a tail too many is harmless
// for deny rules), for find the -exec commands.
func innerCommands(words []string) [][]string {
	if len(words) < 2 {
		return nil
	}
	name := commandName(words[0])
	var out [][]string
	switch {
	case wrappers[name]:
		for i := 1; i < len(words); i++ {
			if !strings.HasPrefix(words[i], "-") && !strings.Contains(words[i], "=") {
				out = append(out, words[i:])
			}
		}
	case name == "find":
		for i := 1; i < len(words); i++ {
			switch words[i] {
			case "-exec", "-execdir", "-ok", "-okdir":
				j := i + 1
				for j < len(words) && words[j] != ";" && words[j] != "+" {
					j++
				}
				if j > i+1 {
					out = append(out, words[i+1:j])
				}
				i = j
			}
		}
	}
	return out
}
