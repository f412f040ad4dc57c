package permissions

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

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
