package config

import (
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"
)

var (
	scriptKeys     = []string{"text", "when", "tool_calls"}
	scriptCallKeys = []string{"name", "arguments", "arguments_json"}
)

func (l *loader) script(n *yaml.Node) []ScriptEntry {
	return mappings(l, n, "a list of assistant turns", "a script entry with text and/or tool_calls", func(item *yaml.Node) ScriptEntry {
		e := ScriptEntry{Pos: pos(item)}
		l.eachKey(item, "script key", scriptKeys, nil, func(key string, k, v *yaml.Node) {
			switch key {
			case "text":
				e.Text = l.scalar(v)
				l.template(v, e.Text)
			case "when":
				e.When = l.scalar(v)
				l.template(v, e.When)
			case "tool_calls":
				e.ToolCalls = l.scriptCalls(v)
			}
		})
		if e.Text == "" && len(e.ToolCalls) == 0 {
			l.errorf(item, "script entry has neither text nor tool_calls")
		}
		return e
	})
}

func (l *loader) scriptCalls(n *yaml.Node) []ScriptCall {
	return mappings(l, n, "a list of tool calls", "a tool call with name and arguments", func(item *yaml.Node) ScriptCall {
		c := ScriptCall{Pos: pos(item)}
		l.eachKey(item, "tool call key", scriptCallKeys, nil, func(key string, k, v *yaml.Node) {
			switch key {
			case "name":
				c.Name = l.str(v)
			case "arguments":
				c.Arguments = l.jsonValue(v)
				l.templates(v)
			case "arguments_json":
				c.ArgumentsJSON = l.str(v)
				l.template(v, c.ArgumentsJSON)
			}
		})
		if c.Name == "" {
			l.errorf(item, "tool call has no name")
		}
		if c.Arguments != nil && c.ArgumentsJSON != "" {
			l.errorf(item, "tool call has both arguments and arguments_json; use one")
		}
		return c
	})
}

// template reports a script template that does not parse (the script model
// renders text, when, arguments_json and the strings of arguments), so it is
// a config error at its position rather than a failure mid-run.
func (l *loader) template(n *yaml.Node, text string) {
	if !strings.Contains(text, "{{") {
		return
	}
	if _, err := template.New("script").Option("missingkey=error").Parse(text); err != nil {
		msg := strings.TrimPrefix(err.Error(), "template: script:")
		if line, rest, ok := strings.Cut(msg, ": "); ok {
			msg = rest + " (line " + line + " of the template)"
		}
		l.errorf(n, "not a valid template: %s", msg)
	}
}

// templates checks the templates in the string values of n.
func (l *loader) templates(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		l.template(n, n.Value)
	}
	for _, c := range n.Content {
		l.templates(c)
	}
}
