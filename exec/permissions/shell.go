package permissions

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
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

// secretRef reports whether s names a secret variable.
func secretRef(s string) bool {
	return strings.Contains(strings.ToUpper(s), "HITL_SECRET_")
}

// Analysis is what a shell line does, as far as parsing can tell.
type Analysis struct {
	Line string
	// File is the parsed line (nil when it does not parse).
	File *syntax.File
	// ParseErr is set when the line does not parse in the dialect.
	ParseErr error
	// Commands are the simple commands of the line, in order, nested ones
	// included (inside substitutions, subshells, blocks).
	Commands []Command
	// Hidden are commands found inside others: the inner command of a
	// wrapper (sudo rm, xargs rm, env X=1 rm, find -exec rm), the commands
	// of an sh -c string or of eval. Only deny and ask rules look at them.
	Hidden []Command
	// Unsafe lists what keeps the line from being allowed without asking
	// (DESIGN §7): anything but literal words, an assignment, a nested
	// shell, a background job, a here-document, a redirection other than
	// /dev/null or between descriptors 0-2, a comment, a line
	// continuation, a control or format character, a compound command.
	Unsafe []string

	dialect     Dialect
	hiddenBytes int
}

// Command is one simple command.
type Command struct {
	// Text is the command as written in the line.
	Text string
	// Words are its words with quotes removed; expansions ($X) are kept as
	// written.
	Words []string
	// Braces are its words after brace expansion (a{b,c} gives the two
	// words ab ac), when a word has braces.
	Braces []string
}

// matchAllow matches an allow glob against every form of the command: as
// written, with its quotes removed, and each brace expansion.
func (c Command) matchAllow(g *regexp.Regexp) bool {
	if !g.MatchString(c.Text) && !g.MatchString(strings.Join(c.Words, " ")) {
		return false
	}
	return c.Braces == nil || g.MatchString(strings.Join(c.Braces, " "))
}

// matchDeny matches a deny or ask glob against any form of the command, also
// with the command name without its directory (/bin/rm).
func (c Command) matchDeny(g *regexp.Regexp) bool {
	if g.MatchString(c.Text) {
		return true
	}
	for _, w := range [][]string{c.Words, c.Braces} {
		if g.MatchString(strings.Join(w, " ")) {
			return true
		}
		if len(w) > 0 && strings.Contains(w[0], "/") {
			b := append([]string{path.Base(w[0])}, w[1:]...)
			if g.MatchString(strings.Join(b, " ")) {
				return true
			}
		}
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

// maxBraces bounds the words of one command after brace expansion; a
// command with more is never allowed without asking, and deny and ask rules
// see its first maxBraces words.
const maxBraces = 256

// Analyze parses line as bash and collects its commands and what makes it
// unsafe to run unasked.
func Analyze(line string) *Analysis { return AnalyzeIn(line, DialectBash) }

// AnalyzeIn parses line in dialect d (bash for DialectUnknown).
func AnalyzeIn(line string, d Dialect) *Analysis {
	a := &Analysis{Line: line, dialect: d}
	a.lineChecks()
	a.File, a.ParseErr = analyzeInto(a, line, 0, false)
	return a
}

// lineChecks: what makes the line unsafe whatever its parse.
func (a *Analysis) lineChecks() {
	for _, r := range a.Line {
		if r == utf8.RuneError || r != ' ' && !strconv.IsGraphic(r) {
			q := strconv.QuoteToGraphic(string(r))
			if r == utf8.RuneError {
				q = "invalid UTF-8"
			}
			a.Unsafe = append(a.Unsafe, fmt.Sprintf("has a control, format or line-separator character (%s)", q[1:len(q)-1]))
			break
		}
	}
	if strings.Contains(a.Line, "\\\n") || strings.Contains(a.Line, "\\\r\n") {
		a.Unsafe = append(a.Unsafe, "has a line continuation (backslash-newline)")
	}
	if secretRef(a.Line) {
		a.Unsafe = append(a.Unsafe, "mentions a secret placeholder (HITL_SECRET_)")
	}
}

func analyzeInto(a *Analysis, src string, depth int, hidden bool) (*syntax.File, error) {
	lang := syntax.LangBash
	if !hidden {
		lang = a.dialect.lang()
	}
	f, err := syntax.NewParser(syntax.Variant(lang), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, err
	}
	w := &walker{a: a, src: src, depth: depth, hidden: hidden}
	syntax.Walk(f, w.visit)
	return f, nil
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
	case *syntax.Comment:
		w.unsafe("has a comment (#%s)", termShort(n.Text))
	case *syntax.Stmt:
		if n.Background || n.Coprocess || n.Disown {
			w.unsafe("runs a command in the background")
		}
		if n.Cmd == nil {
			w.unsafe("has a statement with no command (%s)", w.text(n))
		}
	case *syntax.TimeClause:
		// bash reads "time" after |& as a program, the parser as
		// the keyword: refuse the keyword.
		w.unsafe("has the time keyword (%s)", w.text(n))
	case *syntax.CallExpr:
		w.call(n)
	case *syntax.Redirect:
		switch {
		case n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc:
			w.unsafe("has a here-document (%s)", w.text(n))
		case n.Op == syntax.WordHdoc:
			w.unsafe("has a here-string (%s)", w.text(n))
		case !safeRedirect(n):
			w.unsafe("redirects to or from a file (%s)", w.text(n))
		}
	case *syntax.SglQuoted:
		if n.Dollar {
			w.unsafe("has $'...' quoting (%s)", w.text(n))
		}
	case *syntax.DblQuoted:
		if n.Dollar {
			w.unsafe("has $\"...\" quoting (%s)", w.text(n))
		}
	case *syntax.ExtGlob:
		// *(...) is a pattern to bash, but to zsh a glob qualifier:
		// *(e:'touch x':) runs code.
		w.unsafe("has an extended glob (%s)", w.text(n))
	case *syntax.CmdSubst:
		w.unsafe("has a command substitution (%s)", w.text(n))
	case *syntax.ProcSubst:
		w.unsafe("has a process substitution (%s)", w.text(n))
	case *syntax.ParamExp:
		w.unsafe("has a parameter expansion (%s)", w.text(n))
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

// termShort is s cut to a few characters, for a reason.
func termShort(s string) string {
	if r := []rune(s); len(r) > 20 {
		return string(r[:20]) + "..."
	}
	return s
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
	braces, ok := w.braces(c.Args)
	cmd.Braces = braces
	w.add(cmd)
	switch {
	case !ok:
		w.unsafe("has more than %d words after brace expansion (%s)", maxBraces, w.text(c))
	case len(braces) > 0 && w.a.dialect != DialectBash:
		// /bin/sh reads braces literally; hitl's interpreter would
		// expand them: refuse rather than run something else.
		w.unsafe("has a brace expansion, which /bin/sh does not do (%s)", w.text(c))
	case w.a.dialect == DialectBash && strayBraces(c.Args):
		// bash finds brace expansions the parser does not
		// (a{b}c,d} is "a{b}c" and "ad" to bash).
		w.unsafe("has braces that bash may expand otherwise (%s)", w.text(c))
	}
	if name, lit := literalWord(c.Args[0]); !lit || strings.ContainsAny(name, "*?[~") {
		w.unsafe("runs a command whose name is not a plain word (%s)", w.text(c.Args[0]))
	}
	for _, v := range [][]string{cmd.Words, braces} {
		if why := nested(v, 0); why != "" {
			w.unsafe("%s", why)
			break
		}
	}
	w.hiddenCommands(cmd.Words, w.depth)
	if braces != nil {
		w.hiddenCommands(braces, w.depth)
	}
}

// braces returns words after brace expansion (nil when none has braces);
// ok is false past maxBraces words (the first maxBraces are returned).
func (w *walker) braces(words []*syntax.Word) (out []string, ok bool) {
	has := false
	for _, word := range words {
		cp := *word
		if !syntax.SplitBraces(&cp) {
			out = append(out, w.wordText(word))
			continue
		}
		has = true
		for ew, err := range expand.BracesSeq(nil, &cp) {
			if err != nil || len(out) >= maxBraces {
				return out, false
			}
			out = append(out, w.wordText(ew))
		}
	}
	if !has {
		return nil, true
	}
	return out, len(out) <= maxBraces
}

// strayBraces reports whether an unquoted { or } of words is left over
// once brace expansions are split out, in the words or inside an expansion.
func strayBraces(words []*syntax.Word) bool {
	for _, word := range words {
		cp := *word
		syntax.SplitBraces(&cp)
		if partsHaveBraces(cp.Parts) {
			return true
		}
	}
	return false
}

func partsHaveBraces(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "{}") {
				return true
			}
		case *syntax.BraceExp:
			for _, e := range p.Elems {
				if partsHaveBraces(e.Parts) {
					return true
				}
			}
		}
	}
	return false
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
			_, _ = analyzeInto(w.a, script, depth+1, true)
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
	"unshare": true, "runuser": true, "nsenter": true, "chrt": true, "prlimit": true,
	"systemd-run": true, "firejail": true, "catchsegv": true, "faketime": true,
}

// shellOptionRunners run their -c (--command) option's text in a shell:
// flock FILE -c CMD, script -c CMD, su -c, runuser -c, sg GROUP -c.
var shellOptionRunners = map[string]bool{"flock": true, "script": true, "su": true, "runuser": true, "sg": true}

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
	case name == "env" && splitsString(words[1:]):
		return "runs a command line split from one string (env -S), which no rule reads as a shell would"
	case shellOptionRunners[name] && !shells[name]:
		for _, w := range words[1:] {
			if w == "-c" || w == "--command" || strings.HasPrefix(w, "--command=") ||
				(strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w[1:], "c")) {
				return fmt.Sprintf("runs a nested shell (%s -c)", name)
			}
		}
	case shells[name]:
		if _, ok := shellScript(words); ok {
			return fmt.Sprintf("runs a nested shell (%s -c)", name)
		}
		if !hasOperand(words[1:]) {
			return fmt.Sprintf("runs a nested shell reading commands from its input (%s)", name)
		}
	}
	return ""
}

// splitsString says whether env's arguments split a string into a command
// line: -S STRING, -SSTRING, --split-string[=STRING], or -S in a group of
// short options (-iS).
func splitsString(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case strings.HasPrefix(a, "--split-string"):
			return true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], "S"):
			return true
		case !strings.HasPrefix(a, "-") && !strings.Contains(a, "="):
			return false // the command: env's options end here
		}
	}
	return false
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
