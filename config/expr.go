package config

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// CommandCall is a tool call written in a command (cagent's expression
// ${tool({key: value})}): run when the command is used, its result text
// put in its place.
type CommandCall struct {
	Tool string
	Args json.RawMessage // a JSON object
	Text string          // as written, ${...}
}

// Segment is a piece of a command's text: plain text (${args} places
// still in it), or a tool call.
type Segment struct {
	Text string
	Call *CommandCall
}

// parseCall reads expr (the inside of ${...}) as a tool call: NAME() or
// NAME({key: value, ...}) with a JavaScript object literal of strings,
// numbers, booleans, null, arrays and objects.
func parseCall(expr string) (*CommandCall, error) {
	p := &litParser{s: strings.TrimSpace(expr)}
	name := p.ident()
	if name == "" {
		return nil, fmt.Errorf("expected a tool's name")
	}
	p.space()
	if !p.eat('(') {
		return nil, fmt.Errorf("expected ( after %s", name)
	}
	p.space()
	args := any(map[string]any{})
	if !p.peek(')') {
		v, err := p.value(0)
		if err != nil {
			return nil, err
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, fmt.Errorf("the argument of %s must be an object {key: value}", name)
		}
		args = v
		p.space()
	}
	if !p.eat(')') {
		return nil, fmt.Errorf("expected ) to close the call of %s", name)
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q after the call of %s", p.s[p.i:], name)
	}
	data, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	return &CommandCall{Tool: name, Args: data}, nil
}

type litParser struct {
	s string
	i int
}

func (p *litParser) space() {
	for p.i < len(p.s) && unicode.IsSpace(rune(p.s[p.i])) {
		p.i++
	}
}

func (p *litParser) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

func (p *litParser) eat(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

func (p *litParser) ident() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (p.i > start && c >= '0' && c <= '9') {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

const maxDepth = 32

func (p *litParser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("values nest more than %d deep", maxDepth)
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("expected a value")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		obj := map[string]any{}
		for {
			p.space()
			if p.eat('}') {
				return obj, nil
			}
			var key string
			if p.peek('"') || p.peek('\'') {
				k, err := p.str()
				if err != nil {
					return nil, err
				}
				key = k
			} else if key = p.ident(); key == "" {
				return nil, fmt.Errorf("expected a key at %q", rest(p.s[p.i:]))
			}
			p.space()
			if !p.eat(':') {
				return nil, fmt.Errorf("expected : after %s", key)
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			obj[key] = v
			p.space()
			if p.eat(',') {
				continue
			}
			if !p.eat('}') {
				return nil, fmt.Errorf("expected , or } at %q", rest(p.s[p.i:]))
			}
			return obj, nil
		}
	case c == '[':
		p.i++
		list := []any{}
		for {
			p.space()
			if p.eat(']') {
				return list, nil
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
			p.space()
			if p.eat(',') {
				continue
			}
			if !p.eat(']') {
				return nil, fmt.Errorf("expected , or ] at %q", rest(p.s[p.i:]))
			}
			return list, nil
		}
	case c == '"' || c == '\'':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		p.i++
		for p.i < len(p.s) && strings.IndexByte("0123456789.eE+-", p.s[p.i]) >= 0 {
			p.i++
		}
		f, err := strconv.ParseFloat(p.s[start:p.i], 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", p.s[start:p.i])
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	default:
		switch w := p.ident(); w {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null":
			return nil, nil
		case "":
			return nil, fmt.Errorf("expected a value at %q", rest(p.s[p.i:]))
		default:
			return nil, fmt.Errorf("%s: only literal values (strings, numbers, true, false, null, arrays, objects) are supported by hitl in a tool call's arguments", w)
		}
	}
}

// str reads a quoted string ('…' or "…", with JavaScript's escapes).
func (p *litParser) str() (string, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == q:
			return b.String(), nil
		case c == '\\' && p.i < len(p.s):
			e := p.s[p.i]
			p.i++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("a string is not closed")
}

func rest(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// RenderSegments is RenderCommand over a command's segments: the words of
// rest fill the ${args} places of its text (never a tool call's
// arguments), and with no place anywhere rest is appended.
func RenderSegments(segs []Segment, rest string) []Segment {
	uses := false
	for _, s := range segs {
		if s.Call == nil && usesArgs().MatchString(s.Text) {
			uses = true
		}
	}
	out := make([]Segment, 0, len(segs)+1)
	for _, s := range segs {
		if s.Call == nil && usesArgs().MatchString(s.Text) {
			s.Text = RenderCommand(s.Text, rest)
		}
		out = append(out, s)
	}
	if !uses && strings.TrimSpace(rest) != "" {
		out = append(out, Segment{Text: "\n\n" + rest})
	}
	return out
}
