package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/configcheck"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/internal/proctest"
)

// A run whose allow rules may run lines unasked has their sandbox started
// when it is made, before its first turn (a model may send a line as
// soon as it is asked), and ends it with the run.
func TestRunStartsTheSandboxOfItsLinesBeforeItsFirstTurn(t *testing.T) {
	if sb, err := sandbox.New(sandbox.Auto, t.TempDir()); err != nil || strings.Contains(sb.Why, "sandbox of its own") ||
		(sb.Mechanism() != sandbox.MechLayered && sb.Mechanism() != sandbox.MechLandlock) {
		t.Skip("no run's sandbox here")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.yaml")
	const agent = `models:
  m:
    provider: script
    script: [{text: done}]
agents:
  root:
    model: m
    toolsets: [{type: shell}]
permissions:
  allow: ["shell:cmd=/bin/true"]
`
	if err := os.WriteFile(path, []byte(agent), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, os.LookupEnv, configcheck.Checks())
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	before := len(proctest.Children(t))
	r, err := New(cfg, cfg.Agent("root"), "go", Options{Getenv: func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return os.Getenv(k)
	}})
	if err != nil {
		t.Fatal(err)
	}
	started := false
	for deadline := time.Now().Add(10 * time.Second); !started && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		started = len(proctest.Children(t)) > before
	}
	r.Close()
	if !started {
		t.Fatal("the run's sandbox had not started when the run was made")
	}
	for deadline := time.Now().Add(10 * time.Second); len(proctest.Children(t)) > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run's sandbox outlived the run")
		}
	}
}
