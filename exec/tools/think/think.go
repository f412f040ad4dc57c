// Package think is cagent's think toolset: a scratchpad the model writes its
// reasoning to. It acts on nothing and never asks.
package think

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/hitl-dev/hitl/exec"
)

// Name is the tool's name.
const Name = "think"

// Instructions is the toolset's guidance for the system prompt (cagent's).
const Instructions = `## Think Tool

Use the think tool as a scratchpad before acting. Think to:
- Check which rules or policies apply
- Verify you have all required information
- Validate planned actions before executing
- Reason through complex multi-step problems`

// Options configure the tool; think has none (cagent's toolset takes no
// keys).
type Options struct{}

// Tool is the think tool. Like cagent's, its result is every thought of the
// run so far, so the log survives in the model's view.
type Tool struct {
	mu       sync.Mutex
	thoughts []string
}

// New returns the tool.
func New(Options) *Tool { return &Tool{} }

func (*Tool) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name:        Name,
		Description: "Use the tool to think about something. It will not obtain new information or change the database, but just append the thought to the log. Use it when complex reasoning or some cache memory is needed.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"thought":{"type":"string","description":"The thought to think about"}},` +
			`"required":["thought"],"additionalProperties":false}`),
	}
}

type args struct {
	Thought *string `json:"thought"`
}

func parse(raw json.RawMessage) (string, error) {
	var a args
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", fmt.Errorf("invalid arguments: %v", err)
	}
	if a.Thought == nil {
		return "", fmt.Errorf("invalid arguments: thought is required")
	}
	return *a.Thought, nil
}

// Call appends the thought to the log and returns the log:
// "Thoughts:\n" and the thoughts, one a line.
func (t *Tool) Call(_ context.Context, call exec.ToolCall) (exec.Result, error) {
	thought, err := parse(call.Arguments)
	if err != nil {
		return exec.Result{IsError: true, Text: err.Error()}, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.thoughts = append(t.thoughts, thought)
	return exec.Result{Text: "Thoughts:\n" + strings.Join(t.thoughts, "\n")}, nil
}

// Resume rebuilds the log from a resumed run's conversation: the thought
// of every think call answered by a result that is not an error, in order.
// (A call the permissions denied has an error result: it never reached the
// log.)
func (t *Tool) Resume(msgs []exec.Message) {
	var thoughts []string
	calls := map[string]string{} // the last assistant turn's think calls by id
	for _, m := range msgs {
		switch m.Role {
		case exec.RoleAssistant:
			calls = map[string]string{}
			for _, c := range m.ToolCalls {
				if c.Name != Name {
					continue
				}
				if thought, err := parse(c.Arguments); err == nil {
					calls[c.ID] = thought
				}
			}
		case exec.RoleTool:
			thought, ok := calls[m.ToolCallID]
			if ok && m.ToolName == Name && !m.IsError {
				thoughts = append(thoughts, thought)
				delete(calls, m.ToolCallID)
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.thoughts = thoughts
}
