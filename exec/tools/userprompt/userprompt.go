// Package userprompt is cagent's user_prompt tool (seed 002): the model asks
// a question, optionally with a JSON Schema for the answer, and gets back
// {"action": "accept"|"decline"|"cancel", "content": ...}.
package userprompt

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// Tool is user_prompt.
type Tool struct {
	name  string
	asker prompt.Questioner
}

// New returns the tool, named name (default user_prompt).
func New(name string, asker prompt.Questioner) *Tool {
	if name == "" {
		name = "user_prompt"
	}
	return &Tool{name: name, asker: asker}
}

// AsksPerson: a call's arguments are the question (exec.Asking).
func (t *Tool) AsksPerson() bool { return true }

func (t *Tool) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name: t.name,
		Description: "Ask the user a question and wait for the answer. Give a JSON Schema to get structured content " +
			"(an enum for a choice, a boolean for a yes/no confirmation, an object for a form; format: password for a secret). " +
			`The result is {"action":"accept","content":...}, {"action":"decline"} or {"action":"cancel"}; handle all three.`,
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"message":{"type":"string","description":"The question or prompt text to display to the user."},` +
			`"title":{"type":"string","description":"A short title for the prompt."},` +
			`"schema":{"type":"object","description":"JSON Schema defining the expected shape of the response."}},` +
			`"required":["message"]}`),
	}
}

type args struct {
	Message string          `json:"message"`
	Title   string          `json:"title"`
	Schema  json.RawMessage `json:"schema"`
}

type result struct {
	Action  prompt.Action   `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
	Note    string          `json:"note,omitempty"`
}

// Call asks the question; the model's mistakes (a schema that does not
// compile, a default that breaks it) are error results.
func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a args
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return errorResult("invalid arguments: %v", err), nil
	}
	q, err := prompt.FromSchema(a.Schema)
	if err != nil {
		return errorResult("the schema cannot be used: %v", err), nil
	}
	q.Message, q.CallID, q.Tool = a.Message, call.ID, t.name
	q.ModelDefault = true // every default of its schema is the model's
	if a.Title != "" {
		q.Title = a.Title
	}
	ans, err := t.asker.Ask(ctx, q)
	if err != nil {
		return exec.Result{}, err
	}
	r := result{Action: ans.Action}
	if ans.Action == prompt.Accept {
		r.Content = ans.Content
		if ans.Text != "" {
			r.Content, _ = json.Marshal(ans.Text)
		}
		r.Note = prompt.SecretNote(q, r.Content)
	}
	data, _ := json.Marshal(r)
	return exec.Result{Text: string(data)}, nil
}

func errorResult(format string, args ...any) exec.Result {
	return exec.Result{IsError: true, Text: fmt.Sprintf(format, args...)}
}
