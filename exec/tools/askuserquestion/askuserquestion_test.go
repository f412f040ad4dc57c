package askuserquestion

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/schema"
)

// neverAsker fails the test when asked: a call that breaks a rule must not
// reach the person.
type neverAsker struct{ t *testing.T }

func (a neverAsker) Ask(context.Context, prompt.Question) (prompt.Answer, error) {
	a.t.Fatal("the asker was called for a call that breaks a rule")
	return prompt.Answer{}, nil
}

// scriptedAsker answers questions in order and records them.
type scriptedAsker struct {
	answers []prompt.Answer
	asked   []prompt.Question
}

func (a *scriptedAsker) Ask(_ context.Context, q prompt.Question) (prompt.Answer, error) {
	a.asked = append(a.asked, q)
	if len(a.answers) == 0 {
		return prompt.Answer{}, &prompt.StopError{Question: q, Reason: "no more answers"}
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return ans, nil
}

const okQuestion = `{"question":"Which database?","header":"Database","options":[{"label":"PostgreSQL","description":"Relational"},{"label":"SQLite","description":"Embedded"}]}`

func call(questions ...string) exec.ToolCall {
	return exec.ToolCall{ID: "call_1", Name: "AskUserQuestion", Arguments: json.RawMessage(`{"questions":[` + strings.Join(questions, ",") + `]}`)}
}

func q(header string, labels ...string) string {
	opts := make([]string, len(labels))
	for i, l := range labels {
		b, _ := json.Marshal(map[string]string{"label": l, "description": "d"})
		opts[i] = string(b)
	}
	h, _ := json.Marshal(header)
	return `{"question":"Pick?","header":` + string(h) + `,"options":[` + strings.Join(opts, ",") + `]}`
}

// Each rule broken once: a tool error naming the rule and where, and no
// question asked.
func TestValidationRules(t *testing.T) {
	tests := []struct {
		name string
		call exec.ToolCall
		want []string // substrings of the error result
	}{
		{"no questions", call(), []string{"questions must hold 1 to 4 questions, got 0"}},
		{"five questions", call(q("A", "x", "y"), q("B", "x", "y"), q("C", "x", "y"), q("D", "x", "y"), q("E", "x", "y")),
			[]string{"questions must hold 1 to 4 questions, got 5"}},
		{"one option", call(q("A", "x")), []string{`questions[0] (header "A"): options must hold 2 to 4 options, got 1`}},
		{"five options", call(okQuestion, q("B", "a", "b", "c", "d", "e")), []string{`questions[1] (header "B"): options must hold 2 to 4 options, got 5`}},
		{"header too long", call(q("Authentication", "x", "y")), []string{`questions[0] (header "Authentication"): header is 14 characters; headers are at most 12 characters`}},
		{"header of 12 runes is fine, 13 is not", call(q("ÉÉÉÉÉÉÉÉÉÉÉÉ", "x", "y"), q("ÉÉÉÉÉÉÉÉÉÉÉÉÉ", "x", "y")), []string{`questions[1] (header "ÉÉÉÉÉÉÉÉÉÉÉÉÉ"): header is 13 characters`}},
		{"empty header", call(q("", "x", "y")), []string{"questions[0]: header is empty"}},
		{"empty label", call(q("A", "x", " ")), []string{`questions[0] (header "A") options[1] (label " "): label is 0 words; labels are 1 to 5 words`}},
		{"six-word label", call(q("A", "x", "one two three four five six")), []string{`options[1] (label "one two three four five six"): label is 6 words; labels are 1 to 5 words`}},
		{"duplicate header", call(q("A", "x", "y"), q("B", "x", "y"), q("A", "x", "y")), []string{`questions[2] (header "A"): header is already used by questions[0]; headers must be unique within a call`}},
		{"duplicate label", call(q("A", "x", "y", "x")), []string{`questions[0] (header "A") options[2] (label "x"): label is already used by options[0]; labels must be unique within a question`}},
		{"separator in a label", call(q("A", "Red, Green", "Blue")), []string{`options[0] (label "Red, Green"): label contains ", ", which joins the labels of a multi-select answer`}},
		{"empty question", call(`{"question":" ","header":"A","options":[{"label":"x"},{"label":"y"}]}`), []string{`questions[0] (header "A"): question is empty`}},
		{"several problems at once", call(q("Authentication", "x"), q("Authentication", "a, b", "c")),
			[]string{"header is 14 characters", "got 1", "already used by questions[0]", `contains ", "`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := New("", neverAsker{t}).Call(context.Background(), tt.call)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if !res.IsError || res.End != nil {
				t.Fatalf("result %+v: want an error result that does not end the run", res)
			}
			if !strings.HasPrefix(res.Text, "AskUserQuestion was not asked; fix these and call it again:\n- ") {
				t.Errorf("result %q: want it to say nothing was asked", res.Text)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("result %q\nwant it to contain %q", res.Text, w)
				}
			}
		})
	}
}

// The limits themselves are fine: 4 questions of 4 options, 12-character
// headers, 5-word labels.
func TestValidationLimitsPass(t *testing.T) {
	big := func(h string) string { return q(h, "one two three four five", "b", "c", "d") }
	c := call(big("Twelve chars"), big("B"), big("C"), big("D"))
	asker := &scriptedAsker{answers: []prompt.Answer{
		accept(`"b"`), accept(`"one two three four five"`), accept(`"c"`), accept(`"d"`),
	}}
	res, err := New("", asker).Call(context.Background(), c)
	if err != nil || res.IsError {
		t.Fatalf("Call: %+v, %v", res, err)
	}
	want := `{"answers":{"Twelve chars":"b","B":"one two three four five","C":"c","D":"d"}}`
	if res.Text != want {
		t.Errorf("result %s\nwant %s", res.Text, want)
	}
}

func accept(content string) prompt.Answer {
	return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(content), Source: prompt.SourceJSONL}
}

func TestAsksEachQuestionInOrder(t *testing.T) {
	multi := `{"question":"Which features?","header":"Features","multiSelect":true,"options":[{"label":"Caching","description":"Response caching"},{"label":"Logging","description":"Detailed logs"},{"label":"Metrics","description":"Performance monitoring"}]}`
	asker := &scriptedAsker{answers: []prompt.Answer{accept(`"PostgreSQL"`), accept(`["Metrics","Caching"]`)}}
	res, err := New("", asker).Call(context.Background(), call(okQuestion, multi))
	if err != nil || res.IsError || res.End != nil {
		t.Fatalf("Call: %+v, %v", res, err)
	}
	// Labels of a multi-select answer come in option order.
	if want := `{"answers":{"Database":"PostgreSQL","Features":"Caching, Metrics"}}`; res.Text != want {
		t.Errorf("result %s\nwant %s", res.Text, want)
	}
	if len(asker.asked) != 2 {
		t.Fatalf("asked %d questions, want 2", len(asker.asked))
	}
	first, second := asker.asked[0], asker.asked[1]
	if first.CallID != "call_1" || second.CallID != "call_1" || first.Index != 0 || second.Index != 1 || first.Count != 2 || second.Count != 2 {
		t.Errorf("call id / index / count: %+v / %+v", first, second)
	}
	if first.Header != "Database" || first.Title != "" || first.Kind != prompt.KindChoice || first.Multiple || first.Custom {
		t.Errorf("first question %+v", first)
	}
	if o := first.Options[1]; o.ID != "SQLite" || o.Label != "SQLite" || o.Description != "Embedded" {
		t.Errorf("option %+v: want id = label and the description", o)
	}
	if !second.Multiple || second.Tool != "AskUserQuestion" {
		t.Errorf("second question %+v", second)
	}
}

// A declined or dismissed question interrupts: the rest are not asked, the
// model gets "Interrupted", and the run ends cancelled.
func TestInterrupted(t *testing.T) {
	tests := []struct {
		name string
		ans  prompt.Answer
		want string
	}{
		{"decline", prompt.Answer{Action: prompt.Decline, Source: prompt.SourceJSONL}, "the user declined AskUserQuestion question 2 of 3 (B)"},
		{"cancel", prompt.Answer{Action: prompt.Cancel, Source: prompt.SourceTTY}, "the user dismissed AskUserQuestion question 2 of 3 (B)"},
		{"unanswered", prompt.Answer{Action: prompt.Cancel, Source: prompt.SourceEOF}, "nobody answered (eof) AskUserQuestion question 2 of 3 (B)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &scriptedAsker{answers: []prompt.Answer{accept(`"x"`), tt.ans, accept(`"x"`)}}
			res, err := New("", asker).Call(context.Background(), call(q("A", "x", "y"), q("B", "x", "y"), q("C", "x", "y")))
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Text != "Interrupted" {
				t.Errorf("result %+v: want the error Interrupted", res)
			}
			if res.End == nil || res.End.Status != exec.StatusCancelled || res.End.Text != tt.want {
				t.Errorf("end %+v: want cancelled, %q", res.End, tt.want)
			}
			if len(asker.asked) != 2 {
				t.Errorf("asked %d questions, want 2", len(asker.asked))
			}
		})
	}
}

// An error from the asker (stop, a bad answer line) stops the run.
func TestAskerErrorStops(t *testing.T) {
	asker := &scriptedAsker{answers: []prompt.Answer{accept(`"PostgreSQL"`)}}
	_, err := New("Ask", asker).Call(context.Background(), call(okQuestion, q("B", "x", "y")))
	if _, ok := err.(*prompt.StopError); !ok {
		t.Fatalf("err %v: want the StopError", err)
	}
	if asker.asked[1].Tool != "Ask" || asker.asked[1].Index != 1 {
		t.Errorf("question %+v", asker.asked[1])
	}
}

func TestSpecSchemaCompiles(t *testing.T) {
	s, err := schema.Compile(New("", nil).Spec().Parameters)
	if err != nil {
		t.Fatal(err)
	}
	// The schema checks the shape, not the seed's limits: those get
	// validate's precise messages.
	if err := s.Validate(call(q("Authentication", "x")).Arguments); err != nil {
		t.Errorf("the schema rejects a call that validate should explain: %v", err)
	}
	if err := s.Validate(json.RawMessage(`{"questions":[{"question":"q","header":"h"}]}`)); err == nil {
		t.Error("the schema accepts a question without options")
	}
	if New("", nil).Spec().Name != "AskUserQuestion" || New("Ask", nil).Spec().Name != "Ask" {
		t.Error("names")
	}
}
