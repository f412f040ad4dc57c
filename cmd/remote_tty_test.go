//go:build !windows

package cmd_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec/tools/remote"
	"github.com/hitl-dev/hitl/exec/tools/remote/remotetest"
	"github.com/hitl-dev/hitl/internal/ptytest"
)

const remoteTTYAgent = `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: write_file, arguments: {path: notes.txt, content: hello}}]
      - text: "result: {{.Last}}"
agents:
  root:
    model: m
    toolsets:
      - type: remote
        url: ${TOOLSERVER_URL}/invoke
        timeout: 20s
        tools: [{name: write_file, description: Write a file}]
`

// A remote tool's user_choice on a terminal, end to end: the picker shows the
// tool's question, a pick (or Esc: the default) reaches the tool server as
// an index, and the tool's result reaches the model.
func TestTTYRemoteUserChoice(t *testing.T) {
	tests := []struct {
		name     string
		keys     []string
		selected int
		stdout   string
	}{
		// The picker starts on the tool's default (No, the last option).
		{"enter sends the default", []string{ptytest.KeyEnter}, 2, "result: choice 2 \"No\": write to notes.txt declined\n"},
		{"up and enter", []string{ptytest.KeyUp, ptytest.KeyEnter}, 1, "result: choice 1 \"Yes once\": write of 5 bytes to notes.txt allowed\n"},
		{"esc sends the default", []string{ptytest.KeyEsc}, 2, "result: choice 2 \"No\": write to notes.txt declined\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := remotetest.New()
			srv := httptest.NewServer(tools)
			defer func() { srv.Close(); tools.Close() }()
			t.Setenv("TOOLSERVER_URL", srv.URL)
			agent := filepath.Join(t.TempDir(), "remote.yaml")
			if err := os.WriteFile(agent, []byte(remoteTTYAgent), 0o644); err != nil {
				t.Fatal(err)
			}
			r := startTTY(t, false, "exec", "--prompt", "tty", agent)
			if !r.ExpectSettled("(Esc: dismiss, sends the default: No)") {
				t.FailNow()
			}
			r.Send(tt.keys...)
			if code := r.wait(); code != 0 {
				t.Fatalf("exit %d; stdout %q; screen:\n%s", code, r.stdout.String(), r.Screen())
			}
			if got := r.stdout.String(); got != tt.stdout {
				t.Errorf("stdout = %q, want %q", got, tt.stdout)
			}
			screen := r.Screen()
			for _, want := range []string{"Allow writing to the original directory?", "hitl: waiting for write_file at http://127.0.0.1:"} {
				if !strings.Contains(screen, want) {
					t.Errorf("the screen lacks %q:\n%s", want, screen)
				}
			}
			if sels := tools.Selections(); len(sels) != 1 || sels[0] != (remote.Selection{ID: "call_1_1", Selected: tt.selected}) {
				t.Errorf("selections = %+v, want one selecting %d", sels, tt.selected)
			}
		})
	}
}
