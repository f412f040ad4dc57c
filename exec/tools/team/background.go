package team

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/exec"
)

// cagent's limits on background agents.
const (
	MaxConcurrent = 20
	MaxTasks      = 100
	// DefaultWait and MaxWait bound wait_background_agents (seconds).
	DefaultWait = 300
	MaxWait     = 3600
)

// Task is what the journal keeps of a background task, so a resumed run
// knows it: finished ones by their result, running ones continued from
// their last completed step.
type Task struct {
	ID             string `json:"id"`
	Agent          string `json:"agent"`
	Task           string `json:"task"`
	ExpectedOutput string `json:"expected_output,omitempty"`
	Frame          string `json:"frame"`
	Status         string `json:"status"` // running, completed, failed, stopped
	Result         string `json:"result,omitempty"`
	Error          string `json:"error,omitempty"`
}

// Background is the background_agents toolset of one agent: its tasks run
// concurrently, each an agent with its own conversation.
type Background struct {
	From      string
	SubAgents []string
	Chain     []string
	Starter   Starter
	// Ctx is the run's: tasks end with it.
	Ctx context.Context
	// Record is told of each task's start and end (the journal).
	Record func(Task)
	// Fail stops the run with err: a background agent's question nobody
	// answered stops the whole run, as the root's would.
	Fail func(err error)

	mu    sync.Mutex
	tasks map[string]*task
	order []string
	wg    sync.WaitGroup
}

type task struct {
	Task
	start   time.Time
	cancel  context.CancelFunc
	done    chan struct{}
	stopped bool // stop_background_agent asked for it
}

// Tools are the toolset's five tools.
func (b *Background) Tools() []exec.Tool {
	return []exec.Tool{
		&bgTool{b, "run_background_agent", "Start a sub-agent task in the background and return immediately with a task ID.\nUse this to dispatch work to multiple sub-agents concurrently. Its questions and approvals are asked\nlike any other agent's. Check progress with view_background_agent and collect results once the task is complete.",
			`{"type":"object","properties":{"agent":{"type":"string","description":"The name of the sub-agent to run in the background."},"task":{"type":"string","description":"A clear and concise description of the task the agent should achieve."},"expected_output":{"type":"string","description":"The expected output from the agent (optional)."}},"required":["agent","task"],"additionalProperties":false}`, b.run},
		&bgTool{b, "list_background_agents", "List all background agent tasks with their status and runtime.",
			`{"type":"object","properties":{},"additionalProperties":false}`, b.list},
		&bgTool{b, "view_background_agent", "View the output and status of a background agent task by its ID.",
			`{"type":"object","properties":{"task_id":{"type":"string","description":"The ID of the background agent task to view."}},"required":["task_id"],"additionalProperties":false}`, b.view},
		&bgTool{b, "stop_background_agent", "Stop a running background agent task by its ID.",
			`{"type":"object","properties":{"task_id":{"type":"string","description":"The ID of the background agent task to stop."}},"required":["task_id"],"additionalProperties":false}`, b.stop},
		&bgTool{b, "wait_background_agents", "Wait until the given background agent tasks finish (or the timeout passes) and return their results.",
			`{"type":"object","properties":{"task_ids":{"type":"array","items":{"type":"string"},"minItems":1,"description":"The IDs of the tasks to wait for."},"timeout":{"type":"integer","minimum":1,"maximum":3600,"description":"Seconds to wait at most (default 300)."}},"required":["task_ids"],"additionalProperties":false}`, b.wait},
	}
}

type bgTool struct {
	b          *Background
	name, desc string
	schema     string
	call       func(context.Context, exec.ToolCall) (exec.Result, error)
}

func (t *bgTool) Spec() exec.ToolSpec {
	return exec.ToolSpec{Name: t.name, Description: t.desc, Parameters: json.RawMessage(t.schema)}
}

func (t *bgTool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	return t.call(ctx, call)
}

// Instructions are cagent's words on the toolset, for the system prompt.
func Instructions() string {
	return `# Background Agent Tasks

Use background agent tasks to dispatch work to sub-agents concurrently.

- **run_background_agent**: Start a sub-agent task, returns task ID. Its questions and approvals are asked like yours.
- **list_background_agents**: Show all tasks with status and runtime
- **view_background_agent**: Get output and status of a task by task_id
- **stop_background_agent**: Terminate a task by task_id
- **wait_background_agents**: Wait for tasks to finish and get their results

**Notes**: All tasks end when the run ends.`
}

// Restore takes the tasks a resumed run knew: finished ones keep their
// result, running ones continue from their last completed step.
func (b *Background) Restore(tasks []Task) {
	for _, t := range tasks {
		if !slices.Contains(b.SubAgents, t.Agent) {
			continue // another agent's toolset
		}
		if t.Status == "running" {
			b.start(t)
			continue
		}
		b.mu.Lock()
		b.add(&task{Task: t, done: closed()})
		b.mu.Unlock()
	}
}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func (b *Background) add(t *task) {
	if b.tasks == nil {
		b.tasks = map[string]*task{}
	}
	if _, ok := b.tasks[t.ID]; !ok {
		b.order = append(b.order, t.ID)
	}
	b.tasks[t.ID] = t
}

func (b *Background) run(_ context.Context, call exec.ToolCall) (exec.Result, error) {
	var a transferArgs
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return errorf("invalid arguments for run_background_agent: %v", err), nil
	}
	if strings.TrimSpace(a.Task) == "" {
		return errorf("task must not be empty"), nil
	}
	if !slices.Contains(b.SubAgents, a.Agent) {
		return errorf("agent %q is not in the sub-agents list. Available: %s", a.Agent, strings.Join(b.SubAgents, ", ")), nil
	}
	if slices.Contains(b.Chain, a.Agent) || len(b.Chain) > MaxDepth {
		return errorf("agent %s cannot run %s in the background: %s is already working on the task this one is part of, or tasks nest more than %d deep (%s)", b.From, a.Agent, a.Agent, MaxDepth, strings.Join(b.Chain, " → ")), nil
	}
	b.mu.Lock()
	running := 0
	for _, t := range b.tasks {
		if t.Status == "running" {
			running++
		}
	}
	b.mu.Unlock()
	if running >= MaxConcurrent {
		return errorf("maximum concurrent background agent tasks (%d) reached; stop or wait for existing tasks to complete", MaxConcurrent), nil
	}
	if len(b.order) >= MaxTasks {
		return errorf("maximum total background agent tasks (%d) reached", MaxTasks), nil
	}
	id := "agent_task_" + call.ID
	b.start(Task{ID: id, Agent: a.Agent, Task: a.Task, ExpectedOutput: a.ExpectedOutput, Frame: call.ID, Status: "running"})
	return exec.Result{Text: fmt.Sprintf("Background agent task started with ID: %s\nAgent: %s\nTask: %s", id, a.Agent, a.Task)}, nil
}

// start runs t in its own goroutine.
func (b *Background) start(t Task) {
	ctx, cancel := context.WithCancel(b.Ctx)
	tk := &task{Task: t, start: time.Now(), cancel: cancel, done: make(chan struct{})}
	b.mu.Lock()
	b.add(tk)
	b.mu.Unlock()
	if b.Record != nil {
		b.Record(t)
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer close(tk.done)
		defer cancel()
		text, err := b.Starter.Run(ctx, Job{Agent: t.Agent, Task: t.Task, ExpectedOutput: t.ExpectedOutput, Frame: t.Frame, TaskID: t.ID, Chain: slices.Clone(b.Chain)})
		b.mu.Lock()
		switch {
		case err == nil:
			tk.Status, tk.Result = "completed", text
		case tk.stopped:
			tk.Status = "stopped"
		case ctx.Err() != nil:
			// The run ended (or stopped): the task stays running in the
			// journal, and a resumed run continues it.
			b.mu.Unlock()
			return
		default:
			// Not the model's: a question nobody answered, a bad answer.
			// The whole run stops, and a resume continues the task.
			b.mu.Unlock()
			if b.Fail != nil {
				b.Fail(err)
			}
			return
		}
		rec := tk.Task
		b.mu.Unlock()
		if b.Record != nil {
			b.Record(rec)
		}
	}()
}

func (b *Background) lookup(id string) (*task, exec.Result, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.tasks[id]
	if !ok {
		if len(b.order) == 0 {
			return nil, errorf("task not found: %s (no background tasks have been started)", id), false
		}
		return nil, errorf("task not found: %s (the tasks: %s)", id, strings.Join(b.order, ", ")), false
	}
	return t, exec.Result{}, true
}

func (b *Background) list(context.Context, exec.ToolCall) (exec.Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out strings.Builder
	out.WriteString("Background Agent Tasks:\n\n")
	for _, id := range b.order {
		t := b.tasks[id]
		fmt.Fprintf(&out, "ID: %s\n  Agent:   %s\n  Status:  %s\n  Runtime: %s\n\n", t.ID, t.Agent, t.Status, t.runtime())
	}
	if len(b.order) == 0 {
		out.WriteString("No background agent tasks found.\n")
	}
	return exec.Result{Text: out.String()}, nil
}

func (t *task) runtime() time.Duration {
	if t.start.IsZero() {
		return 0
	}
	return time.Since(t.start).Round(time.Second)
}

func taskID(call exec.ToolCall) string {
	var a struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(call.Arguments, &a)
	return a.TaskID
}

func (b *Background) view(_ context.Context, call exec.ToolCall) (exec.Result, error) {
	t, res, ok := b.lookup(taskID(call))
	if !ok {
		return res, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return exec.Result{Text: t.describe()}, nil
}

func (t *task) describe() string {
	var out strings.Builder
	fmt.Fprintf(&out, "Task ID: %s\nAgent:   %s\nStatus:  %s\nRuntime: %s\n\n--- Output ---\n", t.ID, t.Agent, t.Status, t.runtime())
	switch t.Status {
	case "completed":
		if t.Result == "" {
			out.WriteString("<no output>")
		}
		out.WriteString(t.Result)
	case "failed":
		out.WriteString("<task failed>")
		if t.Error != "" {
			fmt.Fprintf(&out, "\nError: %s", t.Error)
		}
	case "stopped":
		out.WriteString("<task was stopped>")
	default:
		out.WriteString("<no output yet — still running>")
	}
	return out.String()
}

func (b *Background) stop(_ context.Context, call exec.ToolCall) (exec.Result, error) {
	t, res, ok := b.lookup(taskID(call))
	if !ok {
		return res, nil
	}
	b.mu.Lock()
	if t.Status != "running" || t.cancel == nil {
		status := t.Status
		b.mu.Unlock()
		return errorf("task %s is not running (status: %s)", t.ID, status), nil
	}
	t.stopped = true
	cancel := t.cancel
	b.mu.Unlock()
	cancel() // its commands' process groups are killed with its context
	<-t.done
	return exec.Result{Text: fmt.Sprintf("Background agent task %s stopped.", t.ID)}, nil
}

func (b *Background) wait(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a struct {
		TaskIDs []string `json:"task_ids"`
		Timeout int      `json:"timeout"`
	}
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return errorf("invalid arguments for wait_background_agents: %v", err), nil
	}
	if a.Timeout <= 0 {
		a.Timeout = DefaultWait
	}
	var tasks []*task
	for _, id := range a.TaskIDs {
		t, res, ok := b.lookup(id)
		if !ok {
			return res, nil
		}
		tasks = append(tasks, t)
	}
	deadline := time.NewTimer(time.Duration(min(a.Timeout, MaxWait)) * time.Second)
	defer deadline.Stop()
	timedOut := false
wait:
	for _, t := range tasks {
		select {
		case <-t.done:
		case <-deadline.C:
			timedOut = true
			break wait
		case <-ctx.Done():
			return exec.Result{}, ctx.Err()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	parts := make([]string, len(tasks))
	for i, t := range tasks {
		parts[i] = t.describe()
	}
	text := strings.Join(parts, "\n\n")
	if timedOut {
		text = fmt.Sprintf("The wait ended after %d seconds with tasks still running.\n\n", a.Timeout) + text
	}
	return exec.Result{Text: text}, nil
}

// Close stops the tasks still running (the run is ending) and waits for
// them.
func (b *Background) Close() error {
	b.mu.Lock()
	var cancels []context.CancelFunc
	for _, t := range b.tasks {
		if t.cancel != nil {
			cancels = append(cancels, t.cancel)
		}
	}
	b.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	b.wg.Wait()
	return nil
}
