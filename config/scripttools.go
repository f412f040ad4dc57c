package config

import (
	"encoding/json"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// scriptCommands reads a script toolset's shell: map (cagent's
// ScriptShellToolConfig): each key becomes a tool.
func (l *loader) scriptCommands(n *yaml.Node) []ScriptCommand {
	if !l.want(n, yaml.MappingNode, "a mapping of command names to {cmd, description, args}") {
		return nil
	}
	var out []ScriptCommand
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		c := ScriptCommand{Name: k.Value, Pos: pos(k)}
		if !validToolName(c.Name) {
			l.errorf(k, "script command name %q: a tool name is letters, digits, _ and - (at most 64)", c.Name)
		}
		if !l.want(v, yaml.MappingNode, "a command mapping with cmd and description") {
			continue
		}
		var cmdNode, requiredNode *yaml.Node
		l.eachKey(v, "script command key", scriptCommandKeys, nil, func(key string, kn, vn *yaml.Node) {
			switch key {
			case "cmd":
				cmdNode = vn
				c.Cmd = l.str(vn)
			case "description":
				c.Description = l.scalar(vn)
			case "args":
				if l.want(vn, yaml.MappingNode, "a mapping of argument names to JSON schemas ({type: string, description: ...})") {
					for j := 0; j+1 < len(vn.Content); j += 2 {
						c.ArgNames = append(c.ArgNames, vn.Content[j].Value)
						if s := vn.Content[j+1]; s.Kind != yaml.MappingNode {
							l.errorf(s, "argument %s: expected a JSON schema mapping ({type: string, description: ...}), got %s", vn.Content[j].Value, kindName(s))
						}
					}
					c.Args = l.jsonValue(vn)
				}
			case "required":
				requiredNode = vn
				c.Required = l.strings(vn)
			case "env":
				c.Env = l.stringMap(vn, true)
			case "working_dir":
				c.WorkingDir = l.str(vn)
			}
		})
		sort.Strings(c.ArgNames)
		if cmdNode == nil {
			l.errorf(v, "script command %s has no cmd: the shell command it runs", c.Name)
		} else {
			// cagent: every $NAME in cmd must be an argument (the model's
			// arguments reach the command as environment variables).
			var undefined []string
			os.Expand(c.Cmd, func(name string) string {
				if !contains(c.ArgNames, name) && !contains(undefined, name) {
					undefined = append(undefined, name)
				}
				return ""
			})
			if len(undefined) > 0 {
				l.errorf(cmdNode, "script command %s uses $%s, which %s not among its args (%s); declare it under args:",
					c.Name, strings.Join(undefined, ", $"), map[bool]string{true: "is", false: "are"}[len(undefined) == 1], strings.Join(c.ArgNames, ", "))
			}
		}
		if requiredNode == nil {
			c.Required = append([]string(nil), c.ArgNames...)
		} else {
			for j, r := range c.Required {
				if !contains(c.ArgNames, r) && j < len(requiredNode.Content) {
					l.errorf(requiredNode.Content[j], "script command %s requires %q, which is not among its args%s", c.Name, r, didYouMean(r, c.ArgNames))
				}
			}
		}
		out = append(out, c)
	}
	if len(n.Content) == 0 {
		l.errorf(n, "shell: is empty; name at least one command")
	}
	return out
}

func validToolName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// propertyNames returns the property names of a JSON object schema.
func propertyNames(schema json.RawMessage) ([]string, bool) {
	if len(schema) == 0 {
		return nil, false
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || s.Properties == nil {
		return nil, false
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, true
}
