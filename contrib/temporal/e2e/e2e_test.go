package e2e

import (
	osexec "os/exec"
	"strings"
	"testing"
)

// approveAgent runs one command that needs a person's approval.
const approveAgent = `models:
  m:
    provider: script
    script:
      - tool_calls: [{name: shell, arguments: {cmd: "echo ran >> count"}}]
      - text: "done: {{.Last}}"
agents:
  root:
    model: m
    toolsets: [{type: shell}]
`

const approveOnce = `{"resume":[{"interruptId":"p1","status":"resolved","payload":"once"}]}`

// Start → exit 4 → list shows the interrupt → the worker is killed while
// the run waits (nothing lost) → a second worker process resumes it after
// the answer → finished; the approved command ran once, and the journal the
// workflow returns holds its receipt.
func TestEndToEndAnswerResumesOnASecondWorker(t *testing.T) {
	srv := startServer(t)
	s := newSite(t, srv, approveAgent)
	w1 := s.worker()
	if out := s.mustRun("hitl-temporal", "start", "agent.yaml", "--task-queue", s.queue, "--id", "e2e-answer"); strings.TrimSpace(out) != "e2e-answer" {
		t.Fatalf("start printed %q", out)
	}
	w := s.waitFor("e2e-answer")
	if len(w.Interrupts) != 1 || w.Interrupts[0].ID != "p1" || w.Interrupts[0].Reason != "confirmation" {
		t.Fatalf("list: %+v", w)
	}
	if out := s.mustRun("hitl-temporal", "list"); !strings.Contains(out, "e2e-answer\twaiting since") || !strings.Contains(out, "p1\tconfirmation\tRun this command?") {
		t.Errorf("list:\n%s", out)
	}
	w1.kill()
	s.worker()

	// Refused by the validator, with the reason, and nothing recorded.
	s.write("unknown.json", `{"resume":[{"interruptId":"p9","payload":"once"}]}`)
	s.write("yes.json", `{"resume":[{"interruptId":"p1","payload":true}]}`)
	s.write("malformed.json", `{"resume":[{"interruptId":`)
	for file, reason := range map[string]string{
		"unknown.json":   `unknown interrupt id "p9": the run waits for p1 (confirmation)`,
		"yes.json":       "a confirmation is answered by naming its option",
		"malformed.json": "not an AG-UI resume document nor an answers file",
	} {
		if _, errOut, code := s.run("hitl-temporal", "answer", "e2e-answer", "--answers", file); code != 2 || !strings.Contains(errOut, reason) {
			t.Errorf("answer %s: exit %d, stderr %q; want exit 2 and %q", file, code, errOut, reason)
		}
	}
	s.write("once.json", approveOnce)
	s.mustRun("hitl-temporal", "answer", "e2e-answer", "--answers", "once.json")
	if out := s.mustRun("hitl-temporal", "result", "e2e-answer", "--journal", "journal.jsonl"); !strings.Contains(out, "e2e-answer: success (exit 0)") {
		t.Errorf("result: %q", out)
	}
	if got := s.read("count"); got != "ran\n" {
		t.Errorf("count = %q: the approved command ran %d times", got, strings.Count(got, "ran"))
	}
	// The receipt is in the journal the workflow returned (verified with
	// the workers' key: the journal carries no authority of its own).
	cmdOut := s.receipts("journal.jsonl")
	if !strings.Contains(cmdOut, `accept "once": echo ran >> count`) {
		t.Errorf("receipts:\n%s", cmdOut)
	}
	// An answer to a finished run is refused.
	if _, errOut, code := s.run("hitl-temporal", "answer", "e2e-answer", "--answers", "once.json"); code != 2 || !strings.Contains(errOut, "finished") {
		t.Errorf("answer to a finished run: exit %d, %q", code, errOut)
	}
}

// A worker killed while the approved command runs: Temporal retries the
// activity on another worker, which resumes the journal written through to
// the store — no second approval asked, the command not run twice.
func TestWorkerKilledDuringTheCommand(t *testing.T) {
	srv := startServer(t)
	s := newSite(t, srv, strings.Replace(approveAgent, "echo ran >> count", "echo ran >> count; sleep 20", 1))
	w1 := s.worker()
	s.mustRun("hitl-temporal", "start", "agent.yaml", "--task-queue", s.queue, "--id", "e2e-kill")
	s.waitFor("e2e-kill")
	s.write("once.json", approveOnce)
	s.mustRun("hitl-temporal", "answer", "e2e-kill", "--answers", "once.json")
	s.waitFile("count")
	w1.kill()
	s.worker()
	out := s.mustRun("hitl-temporal", "result", "e2e-kill", "--journal", "journal.jsonl")
	if !strings.Contains(out, "e2e-kill: success (exit 0)") {
		t.Errorf("result: %q", out)
	}
	if got := s.read("count"); got != "ran\n" {
		t.Errorf("count = %q: the approved command ran %d times", got, strings.Count(got, "ran"))
	}
	j := s.read("journal.jsonl")
	if !strings.Contains(j, "it was not run again") {
		t.Errorf("the model was not told the command was interrupted:\n%s", j)
	}
	// One answer and one receipt: the retried activity asked nothing.
	if a, r := strings.Count(j, `"kind":"answer"`), strings.Count(j, `"kind":"receipt"`); a != 1 || r != 1 {
		t.Errorf("%d answers and %d receipts, want 1 each (no second approval):\n%s", a, r, j)
	}
}

// The dev server restarted while a run waits: the run still waits, takes
// the answer, and finishes.
func TestServerRestartedWhileARunWaits(t *testing.T) {
	srv := startServer(t)
	s := newSite(t, srv, approveAgent)
	s.worker()
	s.mustRun("hitl-temporal", "start", "agent.yaml", "--task-queue", s.queue, "--id", "e2e-restart")
	s.waitFor("e2e-restart")
	srv.stop()
	srv.start()
	s.waitFor("e2e-restart")
	// Answered as a webhook or a chat bot would, with Temporal's own CLI (any
	// SDK sends the same update): the AG-UI document as the update's input.
	if _, err := osexec.Command(temporal, "workflow", "update", "execute", "--address", srv.addr(),
		"--workflow-id", "e2e-restart", "--name", "answer", "--input", `{"resume":[{"interruptId":"p1","payload":7}]}`).CombinedOutput(); err == nil {
		t.Error("temporal workflow update with a bad payload was accepted")
	}
	if out, err := osexec.Command(temporal, "workflow", "update", "execute", "--address", srv.addr(),
		"--workflow-id", "e2e-restart", "--name", "answer", "--input", approveOnce).CombinedOutput(); err != nil {
		t.Fatalf("temporal workflow update execute: %v\n%s", err, out)
	}
	if out := s.mustRun("hitl-temporal", "result", "e2e-restart"); !strings.Contains(out, "success (exit 0)") {
		t.Errorf("result: %q", out)
	}
	if got := s.read("count"); got != "ran\n" {
		t.Errorf("count = %q", got)
	}
}

// What hitl validate refuses fails start with its errors and exit 2, and no
// workflow is created; a worker without hitl refuses to start, naming where
// it looked.
func TestBadInputIsRefusedBeforeAnyWorkflow(t *testing.T) {
	srv := startServer(t)
	s := newSite(t, srv, "agents:\n  root:\n    model: nowhere\n")
	_, errOut, code := s.run("hitl-temporal", "start", "agent.yaml", "--task-queue", s.queue, "--id", "e2e-bad")
	if code != 2 || !strings.Contains(errOut, "agent.yaml:") || !strings.Contains(errOut, "no run was started") {
		t.Errorf("start of a bad agent: exit %d, stderr:\n%s", code, errOut)
	}
	if _, errOut, code := s.run("hitl-temporal", "result", "e2e-bad"); code == 0 || !strings.Contains(errOut, "not found") {
		t.Errorf("a workflow was created: exit %d, %s", code, errOut)
	}
	_, errOut, code = s.run("hitl-temporal", "worker", "--task-queue", s.queue, "--hitl", "/nonexistent/hitl")
	if code != 2 || !strings.Contains(errOut, "no hitl binary: --hitl /nonexistent/hitl") {
		t.Errorf("worker without hitl: exit %d, %s", code, errOut)
	}
	_, errOut, code = s.run("hitl-temporal", "worker", "--task-queue", s.queue)
	if code != 2 || !strings.Contains(errOut, "HITL_SESSION_KEY") {
		t.Errorf("worker without the key: exit %d, %s", code, errOut)
	}
}

func (s *site) receipts(journal string) string {
	s.t.Helper()
	env := append(s.env(), "HITL_SESSION_KEY="+key)
	return runEnv(s.t, s.dir, env, "hitl", "receipts", journal)
}
