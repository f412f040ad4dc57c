package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any input gives a config or errors that each carry a position,
// never a panic.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../agents/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("agents:\n  root: {model: openai/gpt-4o}\n"))
	f.Add([]byte("agents: [\n"))
	f.Add([]byte("&a [*a]"))
	f.Add([]byte("mcps:\n  g: {command: x, defer: [a], toon: \"a, (b\"}\nagents:\n  root:\n    model: openai/x\n    toolsets:\n      - {type: mcp, ref: g}\n      - {type: filesystem, defer: [write_file, nope], toon: .*}\n      - {type: script, shell: {add_tool: {cmd: x}}, defer: true}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parse("f.yaml", data, func(string) (string, bool) { return "v", true })
		if err == nil {
			if cfg == nil || len(cfg.Agents) == 0 {
				t.Fatal("no error and no agents")
			}
			return
		}
		var es Errors
		if !errors.As(err, &es) || len(es) == 0 {
			t.Fatalf("error is not Errors: %v", err)
		}
		for _, e := range es {
			if e.Pos.Line < 1 || e.Pos.Col < 1 {
				t.Fatalf("error without a position: %v", e)
			}
		}
	})
}
