package config

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/internal/yamlsize"
	"gopkg.in/yaml.v3"
)

// eachKey walks a mapping, reporting unknown and unsupported keys, and calls
// f for the known ones.
func (l *loader) eachKey(n *yaml.Node, what string, known, unsupported []string, f func(key string, k, v *yaml.Node)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		switch {
		case seen[key]:
			l.errorf(k, "%s %q appears twice", what, key)
		case contains(known, key):
			f(key, k, v)
		case contains(unsupported, key):
			l.errorf(k, "%s %q is not supported by hitl", what, key)
		default:
			l.errorf(k, "unknown %s %q%s; expected one of: %s", what, key, didYouMean(key, known), strings.Join(known, ", "))
		}
		seen[key] = true
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!null":
		return "nothing"
	case "!!bool":
		return "a boolean"
	case "!!int", "!!float":
		return "a number"
	}
	return "a string"
}

func (l *loader) want(n *yaml.Node, kind yaml.Kind, what string) bool {
	if n.Kind == kind {
		return true
	}
	l.errorf(n, "expected %s, got %s", what, kindName(n))
	return false
}

// scalar returns a scalar's text, reporting anything else.
func (l *loader) scalar(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.errorf(n, "expected a string, got %s", kindName(n))
		return ""
	}
	return n.Value
}

func (l *loader) str(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		l.errorf(n, "expected a string, got %s", kindName(n))
		return ""
	}
	return n.Value
}

func (l *loader) boolean(n *yaml.Node) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		l.errorf(n, "expected true or false, got %s", kindName(n))
	}
	return b
}

func (l *loader) integer(n *yaml.Node, min int64) int64 {
	var i int64
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		l.errorf(n, "expected a whole number, got %s", kindName(n))
		return 0
	}
	if i < min {
		l.errorf(n, "expected a number of at least %d, got %d", min, i)
	}
	return i
}

func (l *loader) float(n *yaml.Node) *float64 {
	var f float64
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
		l.errorf(n, "expected a number, got %s", kindName(n))
		return nil
	}
	return &f
}

func (l *loader) strings(n *yaml.Node) []string {
	if !l.want(n, yaml.SequenceNode, "a list of strings") {
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		out = append(out, l.str(item))
	}
	return out
}

func (l *loader) stringMap(n *yaml.Node, expand bool) map[string]string {
	if !l.want(n, yaml.MappingNode, "a mapping of strings") {
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := n.Content[i+1]
		s := l.scalar(v)
		if expand {
			s = l.expand(v, s)
		}
		out[n.Content[i].Value] = s
	}
	return out
}

// varRef is ${VAR}, or cagent's ${env.VAR} read the same way.
var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{(?:env\.)?([A-Za-z_][A-Za-z0-9_]*)\}`) })

// expand replaces ${VAR} and ${env.VAR} in s; an unset variable is an error
// naming it.
func (l *loader) expand(n *yaml.Node, s string) string {
	return varRef().ReplaceAllStringFunc(s, func(ref string) string {
		name := strings.TrimPrefix(ref[2:len(ref)-1], "env.")
		v, ok := l.lookup(name)
		if !ok {
			l.errorf(n, "environment variable %s is not set (used as %s); set it or remove the reference", name, ref)
		}
		return v
	})
}

func (l *loader) duration(n *yaml.Node) time.Duration {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		return time.Duration(l.integer(n, 1)) * time.Second
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		d, err := time.ParseDuration(n.Value)
		if err == nil && d > 0 {
			return d
		}
	}
	l.errorf(n, "expected a timeout in seconds (120) or a duration (\"90s\", \"10m\"), got %q", n.Value)
	return 0
}

// mappings walks a list of mappings, reporting anything else in it, and
// returns what item makes of each mapping.
func mappings[T any](l *loader, n *yaml.Node, list, item string, f func(m *yaml.Node) T) []T {
	if !l.want(n, yaml.SequenceNode, list) {
		return nil
	}
	out := []T{}
	for _, m := range n.Content {
		if l.want(m, yaml.MappingNode, item) {
			out = append(out, f(m))
		}
	}
	return out
}

// jsonValue converts a YAML value to JSON.
func (l *loader) jsonValue(n *yaml.Node) json.RawMessage {
	if err := yamlsize.Check(n, MaxFile); err != nil {
		l.errorf(n, "%v", err)
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		l.errorf(n, "cannot read value: %v", err)
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		l.errorf(n, "cannot be expressed as JSON (mapping keys must be strings): %v", err)
		return nil
	}
	return data
}
