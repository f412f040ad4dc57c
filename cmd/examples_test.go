package cmd_test

import (
	"path/filepath"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/configcheck"
)

// TestExamples loads and validates every example agent, and checks that each
// runs offline: its models are all script models.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../agents/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			cfg, err := config.Load(file, func(string) (string, bool) { return "", false }, configcheck.Checks())
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range cfg.Agents {
				if a.Model.Provider != "script" {
					t.Errorf("agent %s uses %s: examples must run offline on the script model", a.Name, a.Model.Provider)
				}
			}
		})
	}
}
