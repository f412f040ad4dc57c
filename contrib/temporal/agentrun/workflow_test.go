package agentrun

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

var approval = Interrupt{ID: "p1", Reason: "confirmation", Message: "Run this command?\n\nmake test\n\nin /w", ResponseSchema: json.RawMessage(`{"type":"string","enum":["once","session","no"]}`)}

// fakeHitl stands for the RunHitl activity: the first step stops for the
// approval (exit 4), a resume with answers finishes.
type fakeHitl struct{ steps []Step }

func (f *fakeHitl) RunHitl(_ context.Context, s Step) (StepResult, error) {
	f.steps = append(f.steps, s)
	j := Journal{Data: []byte(strings.Repeat("x", len(f.steps)))}
	if !s.Resume || (len(s.Answers) == 0 && s.Unanswered == "") {
		return StepResult{ExitCode: 4, Status: "input_required", Interrupts: []Interrupt{approval}, Journal: j}, nil
	}
	return StepResult{ExitCode: 0, Status: "success", Text: "done", Journal: j}, nil
}

type updateResult struct {
	rejected, accepted bool
	err                error
}

func (u *updateResult) Reject(err error)    { u.rejected, u.err = true, err }
func (u *updateResult) Accept()             { u.accepted = true }
func (u *updateResult) Complete(any, error) {}

func newEnv(t *testing.T, f *fakeHitl) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(AgentRun, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(f.RunHitl, activity.RegisterOptions{Name: ActivityName})
	return env
}

// An answer the validator refuses is rejected to the caller and nothing is
// recorded; a good one resumes the run on the next activity, with the
// journal the stopped run returned.
func TestAgentRunWaitsForAValidatedAnswer(t *testing.T) {
	f := &fakeHitl{}
	env := newEnv(t, f)
	var bad, unknown, good, late updateResult
	var waiting State
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryState)
		if err != nil {
			t.Fatal(err)
		}
		_ = v.Get(&waiting)
		env.UpdateWorkflow(UpdateAnswer, "1", &bad, json.RawMessage(`{"resume":[{"interruptId":"p1","payload":true}]}`))
		env.UpdateWorkflow(UpdateAnswer, "2", &unknown, json.RawMessage(`{"resume":[{"interruptId":"p7","payload":"once"}]}`))
		env.UpdateWorkflow(UpdateAnswer, "3", &good, json.RawMessage(`{"resume":[{"interruptId":"p1","payload":"once"}]}`))
		env.UpdateWorkflow(UpdateAnswer, "4", &late, json.RawMessage(`{"resume":[{"interruptId":"p1","payload":"no"}]}`))
	}, time.Hour)
	env.ExecuteWorkflow(WorkflowName, Input{AgentFile: "/w/agent.yaml", WorkingDir: "/w"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if waiting.Status != StatusWaiting || len(waiting.Interrupts) != 1 || waiting.Interrupts[0].ID != "p1" {
		t.Errorf("state while waiting = %+v", waiting)
	}
	if !bad.rejected || !strings.Contains(bad.err.Error(), "naming its option") {
		t.Errorf("a bare true approved: %+v", bad)
	}
	if !unknown.rejected || !strings.Contains(unknown.err.Error(), `unknown interrupt id "p7"`) {
		t.Errorf("an unknown interrupt id: %+v", unknown)
	}
	if !good.accepted {
		t.Errorf("the good answer: %+v", good)
	}
	if !late.rejected || !strings.Contains(late.err.Error(), "not waiting") {
		t.Errorf("a second answer while resuming: %+v", late)
	}
	if res.ExitCode != 0 || res.Status != "success" || string(res.Journal.Data) != "xx" {
		t.Errorf("result %+v", res)
	}
	if len(f.steps) != 2 || !f.steps[1].Resume || string(f.steps[1].Answers) != `{"resume":[{"interruptId":"p1","payload":"once"}]}` || string(f.steps[1].Journal.Data) != "x" {
		t.Errorf("steps %+v", f.steps)
	}
}

// Nobody answers within the timeout: stop ends the run (input required,
// timed out, with its journal); cancel resumes it with --unanswered cancel.
func TestAgentRunTimeoutAppliesTheUnansweredPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy   string
		status   string
		timedOut bool
		steps    int
	}{
		{"stop", "input_required", true, 1},
		{"cancel", "success", false, 2},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			f := &fakeHitl{}
			env := newEnv(t, f)
			env.ExecuteWorkflow(WorkflowName, Input{AgentFile: "a.yaml", WorkingDir: "/w", Timeout: time.Hour, Unanswered: tc.policy})
			var res Result
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status || res.TimedOut != tc.timedOut || len(f.steps) != tc.steps {
				t.Fatalf("result %+v after %d steps", res, len(f.steps))
			}
			if tc.steps == 2 && f.steps[1].Unanswered != "cancel" {
				t.Errorf("the resume after the timeout: %+v", f.steps[1])
			}
		})
	}
}

// A bad start input ends the workflow at once, not retried.
func TestAgentRunRefusesABadInput(t *testing.T) {
	env := newEnv(t, &fakeHitl{})
	env.ExecuteWorkflow(WorkflowName, Input{AgentFile: "a.yaml", WorkingDir: "/w", Unanswered: "yes"})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), `unanswered policy "yes"`) {
		t.Fatalf("err = %v", err)
	}
}
