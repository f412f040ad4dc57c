package cmd_test

import (
	"path/filepath"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/configcheck"
)

// TestCompatAgents loads and validates every agent file of testdata/agents
// (cagent's forms and toolsets, written for hitl), with every variable they
// name set; testscript builtin_compat runs them.
func TestCompatAgents(t *testing.T) {
	files, err := filepath.Glob("../testdata/agents/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no agent files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			if _, err := config.Load(file, func(string) (string, bool) { return "x", true }, configcheck.Checks()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
