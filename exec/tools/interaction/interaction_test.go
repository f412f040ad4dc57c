package interaction

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/schema"
)

// oneAsker answers the first question with ans and any follow-up with
// then; with no answer left it fails the test.
type oneAsker struct {
	t     *testing.T
	ans   *prompt.Answer
	then  []prompt.Answer
	asked []prompt.Question
}

func (a *oneAsker) Ask(_ context.Context, q prompt.Question) (prompt.Answer, error) {
	a.asked = append(a.asked, q)
	if a.ans == nil {
		a.t.Fatal("the asker was called for a call that must not ask")
	}
	ans := *a.ans
	a.ans = nil
	if len(a.then) > 0 {
		a.ans, a.then = &a.then[0], a.then[1:]
	}
	return prompt.Check(q, ans)
}

func tools(asker prompt.Questioner) (confirm, question exec.Tool) {
	ts := New(asker)
	return ts[0], ts[1]
}

func call(name, args string) exec.ToolCall {
	return exec.ToolCall{ID: "call_7", Name: name, Arguments: json.RawMessage(args)}
}

var (
	accept  = func(c string) prompt.Answer { return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(c)} }
	text    = func(s string) prompt.Answer { return prompt.Answer{Action: prompt.Accept, Text: s} }
	decline = prompt.Answer{Action: prompt.Decline, Source: prompt.SourceJSONL}
	cancel  = prompt.Answer{Action: prompt.Cancel, Source: prompt.SourceTTY}
	nobody  = prompt.Answer{Action: prompt.Cancel, Source: prompt.SourcePolicy}
)

func TestAskConfirmation(t *testing.T) {
	const id = `{"interaction_id":"call_7",`
	tests := []struct {
		name string
		ans  prompt.Answer
		want string
	}{
		{"yes", accept(`"yes"`), id + `"selected_option_id":"yes","free_text":null,"confirmed":true,"cancelled":false}`},
		{"no", accept(`"no"`), id + `"selected_option_id":"no","free_text":null,"confirmed":false,"cancelled":false}`},
		{"free text is feedback", text("use staging first"), id + `"selected_option_id":"no_with_feedback","free_text":"use staging first","confirmed":false,"cancelled":false}`},
		{"decline", decline, id + `"selected_option_id":null,"free_text":null,"confirmed":false,"cancelled":false}`},
		{"cancel", cancel, id + `"selected_option_id":null,"free_text":null,"confirmed":false,"cancelled":true}`},
		{"unanswered", nobody, id + `"selected_option_id":null,"free_text":null,"confirmed":false,"cancelled":true,"metadata":{"unanswered":true}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &oneAsker{t: t, ans: &tt.ans}
			confirm, _ := tools(asker)
			res, err := confirm.Call(context.Background(), call("ask_confirmation", `{"question":"Deploy to production?","target_tool":"deploy_agent"}`))
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || res.End != nil || res.Text != tt.want {
				t.Errorf("result %+v\nwant %s", res, tt.want)
			}
			q := asker.asked[0]
			if q.Kind != prompt.KindChoice || !q.Custom || q.Consent != prompt.ConsentConfirmNo || string(q.Default) != `"no"` || len(q.Options) != 3 ||
				q.Options[0].ID != "no" || q.Options[1].ID != "no_with_feedback" || q.Options[1].Label != "No — tell me what to change" || q.Options[2].ID != "yes" ||
				q.Hint != "If approved, the agent calls deploy_agent." || q.CallID != "call_7" || q.Tool != "ask_confirmation" {
				t.Errorf("question %+v", q)
			}
		})
	}
}

// no_with_feedback picked as an option asks for the notes; the "no" stands
// whatever the follow-up gets.
func TestNoWithFeedbackFollowUp(t *testing.T) {
	const id = `{"interaction_id":"call_7",`
	tests := []struct {
		name string
		then prompt.Answer
		want string
	}{
		{"notes", text("not on a Friday"), id + `"selected_option_id":"no_with_feedback","free_text":"not on a Friday","confirmed":false,"cancelled":false}`},
		{"declined", decline, id + `"selected_option_id":"no_with_feedback","free_text":null,"confirmed":false,"cancelled":false}`},
		{"dismissed", cancel, id + `"selected_option_id":"no_with_feedback","free_text":null,"confirmed":false,"cancelled":false}`},
		{"unanswered", nobody, id + `"selected_option_id":"no_with_feedback","free_text":null,"confirmed":false,"cancelled":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := accept(`"no_with_feedback"`)
			asker := &oneAsker{t: t, ans: &first, then: []prompt.Answer{tt.then}}
			confirm, _ := tools(asker)
			res, err := confirm.Call(context.Background(), call("ask_confirmation", `{"question":"Deploy?"}`))
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || res.Text != tt.want {
				t.Errorf("result %+v\nwant %s", res, tt.want)
			}
			if len(asker.asked) != 2 {
				t.Fatalf("asked %d questions, want 2", len(asker.asked))
			}
			f := asker.asked[1]
			if f.Kind != prompt.KindText || f.Message != FeedbackMessage || f.Hint != "You answered no to: Deploy?" ||
				f.CallID != "call_7" || f.Index != 1 || f.Count != 2 || f.StopsUnanswered() || f.Tool != "ask_confirmation" {
				t.Errorf("follow-up %+v", f)
			}
		})
	}
}

func TestAskQuestion(t *testing.T) {
	const id = `{"interaction_id":"call_7",`
	const opts = `{"question":"Which data source?","options":[{"id":"postgres","label":"PostgreSQL"},{"id":"bigquery","label":"BigQuery","description":"Google Cloud warehouse"}]}`
	const open = `{"question":"Which data source?"}`
	tests := []struct {
		name, args string
		ans        prompt.Answer
		want       string
	}{
		{"option", opts, accept(`"bigquery"`), id + `"selected_option_id":"bigquery","free_text":null,"confirmed":null,"cancelled":false}`},
		{"free text beside options", opts, text("a CSV file"), id + `"selected_option_id":null,"free_text":"a CSV file","confirmed":null,"cancelled":false}`},
		{"open question, text", open, text("a CSV file"), id + `"selected_option_id":null,"free_text":"a CSV file","confirmed":null,"cancelled":false}`},
		{"open question, content", open, accept(`"a CSV file"`), id + `"selected_option_id":null,"free_text":"a CSV file","confirmed":null,"cancelled":false}`},
		{"decline", opts, decline, id + `"selected_option_id":null,"free_text":null,"confirmed":null,"cancelled":true}`},
		{"cancel", open, cancel, id + `"selected_option_id":null,"free_text":null,"confirmed":null,"cancelled":true}`},
		{"unanswered", open, nobody, id + `"selected_option_id":null,"free_text":null,"confirmed":null,"cancelled":true,"metadata":{"unanswered":true}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &oneAsker{t: t, ans: &tt.ans}
			_, question := tools(asker)
			res, err := question.Call(context.Background(), call("ask_question", tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || res.Text != tt.want {
				t.Errorf("result %+v\nwant %s", res, tt.want)
			}
			q := asker.asked[0]
			if !q.Custom && q.Kind == prompt.KindChoice || q.Consent.IsConsent() || q.CallID != "call_7" {
				t.Errorf("question %+v", q)
			}
		})
	}
}

func TestModelMistakes(t *testing.T) {
	confirm, question := tools(&oneAsker{t: t})
	for _, tt := range []struct {
		tool      exec.Tool
		args, msg string
	}{
		{confirm, `{"question":" "}`, "ask_confirmation was not asked: question is empty; give the approval question"},
		{question, `{"question":""}`, "ask_question was not asked: question is empty; give the question to ask"},
		{question, `{"question":"q","options":[{"id":"a","label":"A"},{"id":"","label":"B"}]}`, "ask_question was not asked: options[1].id is empty; every option needs a stable id"},
		{question, `{"question":"q","options":[{"id":"a","label":"A"},{"id":"a","label":"B"}]}`, `ask_question was not asked: options[1].id "a" repeats options[0].id; ids must be unique`},
	} {
		res, err := tt.tool.Call(context.Background(), call(tt.tool.Spec().Name, tt.args))
		if err != nil || !res.IsError || res.Text != tt.msg {
			t.Errorf("%s: %+v, %v\nwant %q", tt.args, res, err, tt.msg)
		}
	}
}

func TestSpecs(t *testing.T) {
	confirm, question := tools(nil)
	if confirm.Spec().Name != "ask_confirmation" || question.Spec().Name != "ask_question" {
		t.Error("names")
	}
	for _, tool := range []exec.Tool{confirm, question} {
		if _, err := schema.Compile(tool.Spec().Parameters); err != nil {
			t.Errorf("%s: %v", tool.Spec().Name, err)
		}
	}
}
