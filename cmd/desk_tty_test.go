//go:build !windows

package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/internal/ptytest"
)

// At the desk (hitl ask --request, docs/approver-desk), a consent question
// starts on its refusal as on the run's terminal: Enter alone out of habit
// refuses, and the answer line is bound to the question (prompt id, nonce).
func TestTTYDeskEnterAloneRefuses(t *testing.T) {
	tests := []struct {
		name    string
		request string
		want    string // the answer line's content
	}{
		{"shell approval", `{"type":"prompt.request","prompt_id":"p3","tool":"shell","kind":"choice","message":"Run this command?\n\ntouch deployed\n\nin /srv/app","options":[{"id":"once","label":"Yes, once"},{"id":"session","label":"Yes, for this session"},{"id":"no","label":"No"}],"custom":true,"default":"no","consent":true,"run_id":"r-1","cwd":"/srv/app","session":"/tmp/s.jsonl","agent":"root","nonce":"n0nce"}`, `"content":"no"`},
		{"deploy confirmation", `{"type":"prompt.request","prompt_id":"p3","tool":"ask_confirmation","kind":"choice","message":"Deploy to staging?","options":[{"id":"yes","label":"Yes, deploy to staging"},{"id":"no","label":"No, abort"}],"default":"yes","consent":true,"run_id":"r-1","cwd":"/srv/app","session":"/tmp/s.jsonl","agent":"root","nonce":"n0nce"}`, `"content":"no"`},
		{"yes/no", `{"type":"prompt.request","prompt_id":"p3","tool":"user_prompt","kind":"confirm","message":"Ship it?","schema":{"type":"boolean"},"default":true,"consent":true,"run_id":"r-1","cwd":"/srv/app","session":"/tmp/s.jsonl","agent":"root","nonce":"n0nce"}`, `"content":false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := filepath.Join(t.TempDir(), "request.json")
			if err := os.WriteFile(req, []byte(tt.request), 0o644); err != nil {
				t.Fatal(err)
			}
			r := startTTYAgent(t, ttyAgent, ptytest.New(t), false, "ask", "--prompt", "tty", "--request", req)
			// Who asks is said above the question.
			r.mustExpectSettled("run r-1 · agent root · in /srv/app · session /tmp/s.jsonl")
			r.Send(ptytest.KeyEnter)
			if code := r.wait(); code != 0 {
				t.Fatalf("exit %d; screen:\n%s", code, r.Screen())
			}
			line := r.stdout.String()
			for _, want := range []string{tt.want, `"prompt_id":"p3"`, `"nonce":"n0nce"`} {
				if !strings.Contains(line, want) {
					t.Errorf("answer line %q lacks %s; screen:\n%s", line, want, r.Screen())
				}
			}
		})
	}
}
