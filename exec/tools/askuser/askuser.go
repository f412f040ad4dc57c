// Package askuser is the ask_user tool (seed 001, where it is named
// AskUserQuestion; the toolset's name: restores that): one question, with a
// hint, optional string options (several when multiple) and free text
// beside them unless custom is false. The model gets back
// {"question": ..., "answer": ...}.
package askuser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// Separator joins the options chosen for a multiple question (the seed's
// "comma-separated string").
const Separator = ", "

// The error results of a question not answered (DESIGN §4).
const (
	Declined   = "The user declined to answer."
	Dismissed  = "The user dismissed the question."
	Unanswered = "Nobody answered the question: no one was available to ask."
)

// Tool is ask_user.
type Tool struct {
	name  string
	asker prompt.Questioner
}

// New returns the tool, named name (default ask_user).
func New(name string, asker prompt.Questioner) *Tool {
	if name == "" {
		name = "ask_user"
	}
	return &Tool{name: name, asker: asker}
}

const parameters = `{"type":"object","properties":{
"question":{"type":"string","description":"The question to present to the user. Be specific and concise."},
"hint":{"type":"string","description":"Optional hint shown below the question (e.g. expected format, constraints). Omit when options are provided."},
"options":{"type":"array","items":{"type":"string"},"description":"Predefined choices. Do not include an \"Other\" option; use custom: true instead."},
"multiple":{"type":"boolean","description":"Allow the user to select more than one option. Defaults to false."},
"custom":{"type":"boolean","description":"Let the user type their own answer besides the options. Defaults to true."}},
"required":["question"]}`

// AsksPerson: a call's arguments are the question (exec.Asking).
func (t *Tool) AsksPerson() bool { return true }

func (t *Tool) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name: t.name,
		Description: "Pause and ask the user a question, optionally presenting predefined choices. " +
			"Omit options for an open-ended question. " +
			`The result is {"question": "...", "answer": "..."}; when multiple is true the chosen options are comma-separated. ` +
			"If the user declines or dismisses the question, the result is an error saying so.",
		Parameters: json.RawMessage(parameters),
	}
}

type args struct {
	Question string   `json:"question"`
	Hint     string   `json:"hint"`
	Options  []string `json:"options"`
	Multiple bool     `json:"multiple"`
	Custom   *bool    `json:"custom"`
}

type result struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// Call asks the question and returns the answer as the seed's result.
func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a args
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return errorResult("invalid arguments: %v", err), nil
	}
	q, problem := t.question(call.ID, a)
	if problem != "" {
		return errorResult("%s was not asked: %s", t.name, problem), nil
	}
	ans, err := t.asker.Ask(ctx, q)
	if err != nil {
		return exec.Result{}, err
	}
	switch {
	case ans.Action == prompt.Accept:
	case ans.Unanswered():
		return errorResult("%s", Unanswered), nil
	case ans.Action == prompt.Decline:
		return errorResult("%s", Declined), nil
	default:
		return errorResult("%s", Dismissed), nil
	}
	text, err := answerText(q, ans)
	if err != nil {
		return exec.Result{}, fmt.Errorf("%s: %w", t.name, err)
	}
	data, err := json.Marshal(result{Question: a.Question, Answer: text})
	if err != nil {
		return exec.Result{}, fmt.Errorf("%s: encoding the result: %w", t.name, err)
	}
	return exec.Result{Text: string(data)}, nil
}

// question builds the canonical question: a text question without options,
// else a choice whose option ids are the labels. problem is the model's
// mistake, if any.
func (t *Tool) question(callID string, a args) (prompt.Question, string) {
	q := prompt.Question{CallID: callID, Tool: t.name, Kind: prompt.KindText, Message: a.Question, Hint: a.Hint}
	if strings.TrimSpace(a.Question) == "" {
		return q, "question is empty; give the question to ask"
	}
	if len(a.Options) == 0 {
		return q, ""
	}
	seen := map[string]int{}
	for i, o := range a.Options {
		if strings.TrimSpace(o) == "" {
			return q, fmt.Sprintf("options[%d] is empty; every option needs text", i)
		}
		if j, dup := seen[o]; dup {
			return q, fmt.Sprintf("options[%d] %q repeats options[%d]; options must be unique", i, o, j)
		}
		seen[o] = i
		q.Options = append(q.Options, prompt.Option{ID: o, Label: o})
	}
	q.Kind = prompt.KindChoice
	q.Multiple = a.Multiple
	q.Custom = a.Custom == nil || *a.Custom // the seed's default: true
	return q, ""
}

// answerText is the answer the model receives: free text as typed, the
// chosen option, or the chosen options in option order joined with ", ".
func answerText(q prompt.Question, ans prompt.Answer) (string, error) {
	if ans.Text != "" {
		return ans.Text, nil
	}
	if q.Kind != prompt.KindChoice || !q.Multiple {
		var s string
		if err := json.Unmarshal(ans.Content, &s); err != nil {
			return "", fmt.Errorf("the answer is not a string: %s", ans.Content)
		}
		return s, nil
	}
	var ids []string
	if err := json.Unmarshal(ans.Content, &ids); err != nil {
		return "", fmt.Errorf("the answer is not a list of options: %s", ans.Content)
	}
	chosen := map[string]bool{}
	for _, id := range ids {
		chosen[id] = true
	}
	var out []string
	for _, o := range q.Options {
		if chosen[o.ID] {
			out = append(out, o.Label)
		}
	}
	return strings.Join(out, Separator), nil
}

func errorResult(format string, args ...any) exec.Result {
	return exec.Result{IsError: true, Text: fmt.Sprintf(format, args...)}
}
