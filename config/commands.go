package config

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

var commandKeys = []string{"description", "instruction"}

// commands reads cagent's three forms: a map of strings, a list of
// one-entry maps, and a map of {description, instruction} (mixable).
func (l *loader) commands(a *Agent, n *yaml.Node) {
	a.Commands = map[string]string{}
	add := func(k, v *yaml.Node) {
		c := Command{Name: k.Value, Pos: pos(k)}
		if _, dup := a.Commands[c.Name]; dup {
			l.errorf(k, "command %q appears twice", c.Name)
			return
		}
		switch {
		case v.Kind == yaml.MappingNode:
			var instNode *yaml.Node
			l.eachKey(v, "command key", commandKeys, nil, func(key string, kn, vn *yaml.Node) {
				switch key {
				case "description":
					var segs []Segment
					c.Description, segs = l.commandText(vn, l.scalar(vn))
					if len(segs) > 0 {
						l.errorf(vn, "command %s: a tool call in a description is not supported by hitl; put it in the instruction", c.Name)
					}
				case "instruction":
					instNode = vn
					c.Instruction, c.Segments = l.commandText(vn, l.scalar(vn))
				}
			})
			if instNode == nil {
				if c.Description == "" {
					l.errorf(v, "command %s has neither instruction nor description", c.Name)
				}
				c.Instruction = c.Description // cagent sends the description then
			}
		default:
			c.Instruction, c.Segments = l.commandText(v, l.scalar(v))
		}
		a.Commands[c.Name] = c.Instruction
		if len(c.Segments) > 0 {
			if a.CommandSegments == nil {
				a.CommandSegments = map[string][]Segment{}
			}
			a.CommandSegments[c.Name] = c.Segments
		}
		a.CommandInfo = append(a.CommandInfo, c)
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			add(n.Content[i], n.Content[i+1])
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if !l.want(item, yaml.MappingNode, "a command as NAME: instruction") {
				continue
			}
			for i := 0; i+1 < len(item.Content); i += 2 {
				add(item.Content[i], item.Content[i+1])
			}
		}
	default:
		l.errorf(n, "expected commands as a mapping (name: instruction) or a list of them, got %s", kindName(n))
	}
}

var (
	envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:env\.)?([A-Za-z_][A-Za-z0-9_]*)$`) })
	argRef  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^args(?:\[\d+\])?$|^args\.join\(\s*(?:"[^"]*"|'[^']*')?\s*\)$`)
	})
)

// commandText expands ${VAR} and ${env.VAR} in a command (an unset
// variable is an error naming it) and keeps ${args}, ${args[N]} and
// ${args.join(" ")} for RenderCommand. A ${tool({key: value})} is a tool
// call run when the command is used (cagent's expressions: only calls with
// literal arguments); when the text has any, segments are the text cut at
// them (nil otherwise). Other expressions and !`command` insertions are
// not supported.
func (l *loader) commandText(n *yaml.Node, s string) (string, []Segment) {
	if strings.Contains(s, "!`") {
		l.errorf(n, "!`command` in a command (run a command and insert its output) is not supported by hitl")
	}
	var b, seg strings.Builder
	var segs []Segment
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			seg.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		seg.WriteString(s[:i])
		end := closingBrace(s, i+2)
		if end < 0 {
			b.WriteString(s[i:]) // no closing brace: plain text
			seg.WriteString(s[i:])
			break
		}
		ref := s[i : end+1]
		s = s[end+1:]
		expr := strings.TrimSpace(ref[2 : len(ref)-1])
		if argRef().MatchString(expr) {
			b.WriteString(ref)
			seg.WriteString(ref)
			continue
		}
		m := envName().FindStringSubmatch(expr)
		if m == nil {
			call, err := parseCall(expr)
			if err != nil {
				l.errorf(n, "%s: this expression is not supported by hitl (%v); a command may hold ${VAR}, ${env.VAR}, ${args}, ${args[N]}, $N and tool calls ${tool({key: value})}", ref, err)
				continue
			}
			call.Text = ref
			segs = append(segs, Segment{Text: seg.String()}, Segment{Call: call})
			seg.Reset()
			b.WriteString(ref)
			continue
		}
		v, ok := l.lookup(m[1])
		if !ok {
			l.errorf(n, "environment variable %s is not set (used as %s in a command); set it or remove the reference", m[1], ref)
		}
		b.WriteString(v)
		seg.WriteString(v)
	}
	if len(segs) == 0 {
		return b.String(), nil
	}
	return b.String(), append(segs, Segment{Text: seg.String()})
}

// closingBrace returns the index of the } that closes a ${ whose body starts
// at from, skipping nested braces and quoted strings; -1 if none.
func closingBrace(s string, from int) int {
	depth := 0
	var quote byte
	for i := from; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

var (
	argPlaceholder = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\$\{\s*args(?:\[(\d+)\]|\.join\(\s*(?:"([^"]*)"|'([^']*)')?\s*\))?\s*\}|\$([1-9])`)
	})
	usesArgs = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{\s*args[^}]*\}|\$[1-9]`) })
)

// RenderCommand returns the message a command sends when invoked as
// "/NAME REST": REST split into words (quotes group words) fills ${args[N]}
// (0-based, cagent's form) and $N (1-based), ${args} and ${args.join(SEP)}
// take all of them; with no placeholder REST is appended after a blank line.
// A placeholder with no word is left empty.
func RenderCommand(instruction, rest string) string {
	if !usesArgs().MatchString(instruction) {
		if strings.TrimSpace(rest) == "" {
			return instruction
		}
		return instruction + "\n\n" + rest
	}
	words := splitWords(rest)
	return argPlaceholder().ReplaceAllStringFunc(instruction, func(ref string) string {
		m := argPlaceholder().FindStringSubmatch(ref)
		switch {
		case m[1] != "":
			i, _ := strconv.Atoi(m[1])
			if i < len(words) {
				return words[i]
			}
			return ""
		case m[4] != "":
			i, _ := strconv.Atoi(m[4])
			if i-1 < len(words) {
				return words[i-1]
			}
			return ""
		case strings.Contains(ref, "join"):
			sep := m[2] + m[3]
			return strings.Join(words, sep)
		}
		return strings.Join(words, " ")
	})
}

// splitWords splits s at spaces, keeping quoted parts together (quotes
// removed), as cagent's command tokenizer does.
func splitWords(s string) []string {
	var words []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range s {
		switch {
		case quote == 0 && (r == '"' || r == '\''):
			quote, inWord = r, true
		case r == quote:
			quote = 0
		case quote == 0 && (r == ' ' || r == '\t' || r == '\n'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
