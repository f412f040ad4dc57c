// Package askuserquestion is the AskUserQuestion tool (seed 004): the model
// asks 1 to 4 multiple-choice questions in one call and gets back
// {"answers": {HEADER: "Label"}}, the labels of a multi-select question
// joined with ", ". A declined or dismissed question interrupts: the tool
// error result "Interrupted", and the run ends cancelled (exit 3).
package askuserquestion

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// The seed's validation rules.
const (
	MaxQuestions = 4
	MinOptions   = 2
	MaxOptions   = 4
	MaxHeader    = 12 // characters
	MaxWords     = 5  // words in a label
	// Separator joins the labels of a multi-select answer, so no label may
	// hold it.
	Separator = ", "
)

// Tool is AskUserQuestion.
type Tool struct {
	name  string
	asker prompt.Questioner
}

// New returns the tool, named name (default AskUserQuestion).
func New(name string, asker prompt.Questioner) *Tool {
	if name == "" {
		name = "AskUserQuestion"
	}
	return &Tool{name: name, asker: asker}
}

// The schema checks the shape only: the seed's limits (counts, lengths,
// words) are checked by validate, whose messages name the rule broken.
const parameters = `{"type":"object","properties":{
"questions":{"type":"array","description":"1 to 4 questions, asked in order.","items":{"type":"object","properties":{
 "question":{"type":"string","description":"The full question text."},
 "header":{"type":"string","description":"A short label of at most 12 characters, unique within the call; it keys the answer."},
 "options":{"type":"array","description":"2 to 4 choices.","items":{"type":"object","properties":{
  "label":{"type":"string","description":"Display text, 1 to 5 words, unique within the question, without \", \"."},
  "description":{"type":"string","description":"What the option means."}},
  "required":["label"]}},
 "multiSelect":{"type":"boolean","description":"Allow several options to be chosen (default false)."}},
 "required":["question","header","options"]}}},
"required":["questions"]}`

// AsksPerson: a call's arguments are the question (exec.Asking).
func (t *Tool) AsksPerson() bool { return true }

func (t *Tool) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name: t.name,
		Description: "Ask the user 1 to 4 multiple-choice questions and wait for the answers. Each question has a short " +
			"header (at most 12 characters, unique), 2 to 4 options (labels of 1 to 5 words) and multiSelect. " +
			`The result is {"answers": {"<header>": "<label>"}}; several labels of a multi-select question are joined with ", ". ` +
			"The user cannot type a custom answer. If the user dismisses a question, the result is the error Interrupted and the turn ends.",
		Parameters: json.RawMessage(parameters),
	}
}

type option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

type question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []option `json:"options"`
	MultiSelect bool     `json:"multiSelect"`
}

type args struct {
	Questions []question `json:"questions"`
}

// Call checks every rule, then asks the questions in order. The first
// declined or dismissed question ends the run; the rest are not asked.
func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a args
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return errorResult("invalid arguments: %v", err), nil
	}
	if problems := validate(a.Questions); len(problems) > 0 {
		return errorResult("%s was not asked; fix these and call it again:\n- %s", t.name, strings.Join(problems, "\n- ")), nil
	}
	var answers orderedAnswers
	for i, q := range a.Questions {
		pq := t.question(call.ID, i, len(a.Questions), q)
		ans, err := t.asker.Ask(ctx, pq)
		if err != nil {
			return exec.Result{}, err
		}
		if ans.Action != prompt.Accept {
			return interrupted(t.name, i, len(a.Questions), q, ans), nil
		}
		label, err := labels(pq, ans)
		if err != nil {
			return exec.Result{}, fmt.Errorf("%s question %d: %w", t.name, i+1, err)
		}
		answers = append(answers, answer{header: q.Header, label: label})
	}
	data, err := json.Marshal(result{Answers: answers})
	if err != nil {
		return exec.Result{}, fmt.Errorf("%s: encoding the result: %w", t.name, err)
	}
	return exec.Result{Text: string(data)}, nil
}

// question is the canonical question for q, the index-th of count. An
// option's id is its label, so the answer names the label.
func (t *Tool) question(callID string, index, count int, q question) prompt.Question {
	opts := make([]prompt.Option, len(q.Options))
	for i, o := range q.Options {
		opts[i] = prompt.Option{ID: o.Label, Label: o.Label, Description: o.Description}
	}
	return prompt.Question{
		CallID:  callID,
		Tool:    t.name,
		Index:   index,
		Count:   count,
		Kind:    prompt.KindChoice,
		Message: q.Question,
		// Header only: the same text as the title too would be drawn twice.
		Header:   q.Header,
		Options:  opts,
		Multiple: q.MultiSelect,
		Custom:   false, // seed 004: no custom input
	}
}

// labels turns an accepted answer into the label (or labels joined with
// ", ", in option order) the model receives.
func labels(q prompt.Question, ans prompt.Answer) (string, error) {
	if !q.Multiple {
		var id string
		if err := json.Unmarshal(ans.Content, &id); err != nil {
			return "", fmt.Errorf("the answer is not an option id: %s", ans.Content)
		}
		return id, nil
	}
	var ids []string
	if err := json.Unmarshal(ans.Content, &ids); err != nil {
		return "", fmt.Errorf("the answer is not a list of option ids: %s", ans.Content)
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

// interrupted is the seed's cancellation: the error result "Interrupted" for
// the model, and the run ends cancelled.
func interrupted(name string, i, count int, q question, ans prompt.Answer) exec.Result {
	what := "the user declined"
	switch {
	case ans.Unanswered():
		what = fmt.Sprintf("nobody answered (%s)", ans.Source)
	case ans.Action == prompt.Cancel:
		what = "the user dismissed"
	}
	return exec.Result{
		IsError: true,
		Text:    "Interrupted",
		End: &exec.Outcome{
			Status: exec.StatusCancelled,
			Text:   fmt.Sprintf("%s %s question %d of %d (%s)", what, name, i+1, count, q.Header),
		},
	}
}

// validate checks the seed's rules and hitl's three additions (unique
// headers, unique labels, no ", " in a label). It returns one message per
// broken rule, naming the question and option; none means the call can be
// asked.
func validate(qs []question) []string {
	var p []string
	if len(qs) < 1 || len(qs) > MaxQuestions {
		p = append(p, fmt.Sprintf("questions must hold 1 to %d questions, got %d", MaxQuestions, len(qs)))
	}
	headers := map[string]int{}
	for i, q := range qs {
		where := fmt.Sprintf("questions[%d]", i)
		if q.Header != "" {
			where += fmt.Sprintf(" (header %q)", q.Header)
		}
		if strings.TrimSpace(q.Question) == "" {
			p = append(p, where+": question is empty; give the full question text")
		}
		switch n := utf8.RuneCountInString(q.Header); {
		case strings.TrimSpace(q.Header) == "":
			p = append(p, fmt.Sprintf("questions[%d]: header is empty; give a short label of 1 to %d characters", i, MaxHeader))
		case n > MaxHeader:
			p = append(p, fmt.Sprintf("%s: header is %d characters; headers are at most %d characters", where, n, MaxHeader))
		}
		if j, dup := headers[q.Header]; dup && q.Header != "" {
			p = append(p, fmt.Sprintf("%s: header is already used by questions[%d]; headers must be unique within a call, since they key the answers", where, j))
		} else {
			headers[q.Header] = i
		}
		p = append(p, validateOptions(where, q.Options)...)
	}
	return p
}

func validateOptions(where string, opts []option) []string {
	var p []string
	if len(opts) < MinOptions || len(opts) > MaxOptions {
		p = append(p, fmt.Sprintf("%s: options must hold %d to %d options, got %d", where, MinOptions, MaxOptions, len(opts)))
	}
	labels := map[string]int{}
	for k, o := range opts {
		at := fmt.Sprintf("%s options[%d] (label %q)", where, k, o.Label)
		if n := len(strings.Fields(o.Label)); n < 1 || n > MaxWords {
			p = append(p, fmt.Sprintf("%s: label is %d words; labels are 1 to %d words", at, n, MaxWords))
		}
		if strings.Contains(o.Label, Separator) {
			p = append(p, fmt.Sprintf("%s: label contains %q, which joins the labels of a multi-select answer; remove it", at, Separator))
		}
		if j, dup := labels[o.Label]; dup {
			p = append(p, fmt.Sprintf("%s: label is already used by options[%d]; labels must be unique within a question", at, j))
		} else {
			labels[o.Label] = k
		}
	}
	return p
}

// answer is one entry of the answers object.
type answer struct {
	header, label string
}

// orderedAnswers marshals as a JSON object whose keys keep question order.
type orderedAnswers []answer

func (o orderedAnswers) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, a := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(a.header)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(a.label)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

type result struct {
	Answers orderedAnswers `json:"answers"`
}

func errorResult(format string, args ...any) exec.Result {
	return exec.Result{IsError: true, Text: fmt.Sprintf(format, args...)}
}
