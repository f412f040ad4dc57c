package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec/tools/toon"
	"github.com/hitl-dev/hitl/prompt/schema"
)

// parse is Parse with the owners' checks, as hitl runs it
// (exec/configcheck, which imports config, cannot be used here).
func parse(path string, data []byte, lookup func(string) (string, bool)) (*Config, error) {
	return Parse(path, data, lookup, ownersChecks)
}

// load is Load with the owners' checks.
func load(path string, lookup func(string) (string, bool)) (*Config, error) {
	return Load(path, lookup, ownersChecks)
}

var ownersChecks = Checks{
	JSONSchema: func(s json.RawMessage) error { _, err := schema.Compile(s); return err },
	ToolNames:  func(p string) error { _, err := toon.Compile(p); return err },
}

// toonMatches says whether the toon: pattern names the tool (the pattern
// was checked when the file was read).
func toonMatches(pattern, name string) bool {
	m, err := toon.Compile(pattern)
	return err == nil && m.Matches(name)
}

// A check left out refuses the value: nothing unchecked runs.
func TestChecksLeftOutRefuse(t *testing.T) {
	src := []byte("agents:\n  root:\n    model: openai/gpt-4o\n    structured_output: {name: r, schema: {type: object}}\n    toolsets:\n      - {type: think, toon: x}\n")
	_, err := Parse("a.yaml", src, func(string) (string, bool) { return "k", true }, Checks{})
	if err == nil || !strings.Contains(err.Error(), "a.yaml:4:") || !strings.Contains(err.Error(), "a.yaml:6:") || !strings.Contains(err.Error(), "no check for this value") {
		t.Fatalf("err = %v, want both values refused", err)
	}
	if _, err := parse("a.yaml", src, func(string) (string, bool) { return "k", true }); err != nil {
		t.Fatalf("with the owners' checks: %v", err)
	}
}
