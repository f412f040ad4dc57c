// Package agentrun is hitl on Temporal (DESIGN §17): the workflow AgentRun
// runs the real hitl exec, then hitl resume, as activities; when a run stops
// for input (exit 4) it waits, with no activity running, for an answer (the
// update "answer", validated before anything is recorded) or its timeout.
package agentrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Names a client uses.
const (
	WorkflowName = "AgentRun"
	ActivityName = "RunHitl"
	UpdateAnswer = "answer"
	QueryState   = "state"
)

// Statuses of a run, as the query "state" reports them.
const (
	StatusRunning  = "running"  // an activity runs hitl
	StatusWaiting  = "waiting"  // stopped for input: waits for an answer or its timeout
	StatusFinished = "finished" // the workflow is ending
)

// Input starts a run.
type Input struct {
	// AgentFile is the agent file's path (absolute, or relative to
	// WorkingDir): workers read it where the run's working directory is.
	AgentFile  string `json:"agent_file"`
	Message    string `json:"message,omitempty"`
	WorkingDir string `json:"working_dir"`
	// Timeout bounds each wait for an answer (0: no limit); then
	// Unanswered applies: stop (the run ends, input_required), cancel or
	// default (hitl resume --unanswered POLICY).
	Timeout    time.Duration `json:"timeout,omitempty"`
	Unanswered string        `json:"unanswered,omitempty"`
	// ActivityTimeout bounds one hitl exec or resume (default 1h).
	ActivityTimeout time.Duration `json:"activity_timeout,omitempty"`
}

// Interrupt is a question a stopped run waits on: run.finished.interrupts
// (AG-UI's interrupt shape).
type Interrupt struct {
	ID             string          `json:"id"`
	Reason         string          `json:"reason"`
	Message        string          `json:"message,omitempty"`
	ToolCallID     string          `json:"tool_call_id,omitempty"`
	Agent          string          `json:"agent,omitempty"`
	ResponseSchema json.RawMessage `json:"response_schema,omitempty"`
	// Secret: a secret question (its prompt.request said so). Its answer
	// would be kept in workflow history, so no update answers it.
	Secret bool `json:"secret,omitempty"`
}

// Journal is the run's session journal: its bytes in history when small
// (Data), else the name of the file the worker wrote to its store (Ref).
// It is authenticated by the workers' HITL_SESSION_KEY, which never enters
// history.
type Journal struct {
	Data   []byte `json:"data,omitempty"`
	Ref    string `json:"ref,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Size   int64  `json:"size,omitempty"`
}

// Step is one activity: hitl exec (the first), or hitl resume with the
// journal, the answers, or an unanswered policy.
type Step struct {
	WorkflowID string  `json:"workflow_id"`
	Input      Input   `json:"input"`
	Resume     bool    `json:"resume,omitempty"`
	Journal    Journal `json:"journal"`
	Answers    []byte  `json:"answers,omitempty"`
	Unanswered string  `json:"unanswered,omitempty"`
}

// StepResult is how hitl ended: its exit code and run.finished.
type StepResult struct {
	ExitCode   int         `json:"exit_code"`
	Status     string      `json:"status"`
	Text       string      `json:"text,omitempty"`
	Error      string      `json:"error,omitempty"`
	Interrupts []Interrupt `json:"interrupts,omitempty"`
	Journal    Journal     `json:"journal"`
}

// State is what the query "state" returns.
type State struct {
	Status     string      `json:"status"`
	Interrupts []Interrupt `json:"interrupts,omitempty"`
	// Since is when the run began to wait (status waiting).
	Since time.Time `json:"since,omitzero"`
}

// Result is how the run ended: hitl's last exit code and status, and its
// journal (with its receipts). TimedOut: nobody answered within the
// timeout and the policy was stop.
type Result struct {
	ExitCode   int         `json:"exit_code"`
	Status     string      `json:"status"`
	Text       string      `json:"text,omitempty"`
	Error      string      `json:"error,omitempty"`
	Interrupts []Interrupt `json:"interrupts,omitempty"`
	TimedOut   bool        `json:"timed_out,omitempty"`
	Journal    Journal     `json:"journal"`
}

// Activity timing: a worker that dies is noticed within HeartbeatTimeout
// and the activity retried on another; the journal it resumes from is the
// one hitl wrote through to the shared store, not heartbeat details (which
// the SDK may send up to 0.8 × HeartbeatTimeout late).
const (
	HeartbeatTimeout       = 10 * time.Second
	DefaultActivityTimeout = time.Hour
)

// AgentRun is the workflow.
func AgentRun(ctx workflow.Context, in Input) (Result, error) {
	if err := in.check(); err != nil {
		return Result{}, temporal.NewNonRetryableApplicationError(err.Error(), "BadInput", nil)
	}
	st := State{Status: StatusRunning}
	var answer []byte
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (State, error) { return st, nil }); err != nil {
		return Result{}, err
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateAnswer,
		func(ctx workflow.Context, doc json.RawMessage) (string, error) {
			answer = AnswerText(doc)
			return "accepted: the run resumes with it", nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, doc json.RawMessage) error {
			if st.Status != StatusWaiting || answer != nil {
				return fmt.Errorf("the run is not waiting for an answer (it is %s)", describe(st, answer))
			}
			return ValidateAnswer(AnswerText(doc), st.Interrupts)
		}})
	if err != nil {
		return Result{}, err
	}
	timeout := in.ActivityTimeout
	if timeout <= 0 {
		timeout = DefaultActivityTimeout
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: []string{"BadInput"},
		},
	})
	step := Step{WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, Input: in}
	for {
		var res StepResult
		if err := workflow.ExecuteActivity(actx, ActivityName, step).Get(ctx, &res); err != nil {
			st.Status = StatusFinished
			return Result{}, err
		}
		step = Step{WorkflowID: step.WorkflowID, Input: in, Resume: true, Journal: res.Journal}
		if res.ExitCode != 4 {
			st.Status = StatusFinished
			return Result{ExitCode: res.ExitCode, Status: res.Status, Text: res.Text, Error: res.Error, Journal: res.Journal}, nil
		}
		st = State{Status: StatusWaiting, Interrupts: res.Interrupts, Since: workflow.Now(ctx)}
		answered := func() bool { return answer != nil }
		if in.Timeout > 0 {
			ok, err := workflow.AwaitWithTimeout(ctx, in.Timeout, answered)
			if err != nil {
				return Result{}, err
			}
			if !ok {
				if in.Unanswered == "" || in.Unanswered == "stop" {
					st.Status = StatusFinished
					return Result{ExitCode: 4, Status: res.Status, Error: res.Error, Interrupts: res.Interrupts, TimedOut: true, Journal: res.Journal}, nil
				}
				step.Unanswered = in.Unanswered
			}
		} else if err := workflow.Await(ctx, answered); err != nil {
			return Result{}, err
		}
		step.Answers, answer = answer, nil
		st = State{Status: StatusRunning}
	}
}

// AnswerText is the document an update's argument carries: the argument
// itself when it is a JSON object or array (an AG-UI resume document, a
// JSON answers file), the text of a JSON string (a YAML or JSONL answers
// file, or any document as text).
func AnswerText(arg json.RawMessage) []byte {
	var text string
	if json.Unmarshal(arg, &text) == nil {
		return []byte(text)
	}
	return arg
}

// AnswerArg is the update argument that carries doc (AnswerText's inverse).
func AnswerArg(doc []byte) json.RawMessage {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf")))
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		return json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(string(doc))
	return b
}

func describe(st State, answer []byte) string {
	if st.Status == StatusWaiting && answer != nil {
		return "about to resume with an answer already given"
	}
	return st.Status
}

func (in Input) check() error {
	switch {
	case in.AgentFile == "":
		return errors.New("no agent file")
	case in.WorkingDir == "":
		return errors.New("no working directory")
	}
	switch in.Unanswered {
	case "", "stop", "cancel", "default":
	default:
		return fmt.Errorf("unanswered policy %q: expected stop, cancel or default", in.Unanswered)
	}
	return nil
}
