package askuser

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/schema"
)

// oneAsker answers one question with ans and records it; with no answer it
// fails the test.
type oneAsker struct {
	t     *testing.T
	ans   *prompt.Answer
	asked []prompt.Question
}

func (a *oneAsker) Ask(_ context.Context, q prompt.Question) (prompt.Answer, error) {
	a.asked = append(a.asked, q)
	if a.ans == nil {
		a.t.Fatal("the asker was called for a call that must not ask")
	}
	// The front ends hand the tool a checked, canonical answer.
	return prompt.Check(q, *a.ans)
}

func call(args string) exec.ToolCall {
	return exec.ToolCall{ID: "call_1", Name: "ask_user", Arguments: json.RawMessage(args)}
}

func TestAskUser(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		ans     prompt.Answer
		want    string
		isError bool
		check   func(t *testing.T, q prompt.Question)
	}{
		{
			name: "text question with hint",
			args: `{"question":"What is the target deployment environment?","hint":"e.g. AWS, GCP"}`,
			ans:  prompt.Answer{Action: prompt.Accept, Text: "GCP, europe-west1"},
			want: `{"question":"What is the target deployment environment?","answer":"GCP, europe-west1"}`,
			check: func(t *testing.T, q prompt.Question) {
				if q.Kind != prompt.KindText || q.Hint != "e.g. AWS, GCP" || q.CallID != "call_1" || q.Tool != "ask_user" {
					t.Errorf("question %+v", q)
				}
			},
		},
		{
			name: "single choice, custom by default",
			args: `{"question":"Which testing framework?","options":["Vitest (Recommended)","Jest","Mocha"]}`,
			ans:  prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"Jest"`)},
			want: `{"question":"Which testing framework?","answer":"Jest"}`,
			check: func(t *testing.T, q prompt.Question) {
				if q.Kind != prompt.KindChoice || !q.Custom || q.Multiple || q.Options[0].ID != "Vitest (Recommended)" || q.Options[0].Label != "Vitest (Recommended)" {
					t.Errorf("question %+v", q)
				}
			},
		},
		{
			name: "choice by index",
			args: `{"question":"Which?","options":["A","B"],"custom":false}`,
			ans:  prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`1`)},
			want: `{"question":"Which?","answer":"B"}`,
			check: func(t *testing.T, q prompt.Question) {
				if q.Custom {
					t.Error("custom: false was not kept")
				}
			},
		},
		{
			name: "multiple, comma-joined in option order",
			args: `{"question":"Which?","options":["A","B","C"],"multiple":true}`,
			ans:  prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`["C","A"]`)},
			want: `{"question":"Which?","answer":"A, C"}`,
		},
		{
			name: "free text beside the options, as typed",
			args: `{"question":"Which?","options":["A","B"],"multiple":true}`,
			ans:  prompt.Answer{Action: prompt.Accept, Text: "  neither, really  "},
			want: `{"question":"Which?","answer":"  neither, really  "}`,
		},
		{
			name: "decline", args: `{"question":"Which?"}`,
			ans:  prompt.Answer{Action: prompt.Decline, Source: prompt.SourceJSONL},
			want: "The user declined to answer.", isError: true,
		},
		{
			name: "cancel", args: `{"question":"Which?","options":["A","B"]}`,
			ans:  prompt.Answer{Action: prompt.Cancel, Source: prompt.SourceTTY},
			want: "The user dismissed the question.", isError: true,
		},
		{
			name: "unanswered (--unanswered cancel)", args: `{"question":"Which?"}`,
			ans:  prompt.Answer{Action: prompt.Cancel, Source: prompt.SourceEOF},
			want: "Nobody answered the question: no one was available to ask.", isError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &oneAsker{t: t, ans: &tt.ans}
			res, err := New("", asker).Call(context.Background(), call(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.want || res.IsError != tt.isError || res.End != nil {
				t.Errorf("result %+v\nwant %q (error %v)", res, tt.want, tt.isError)
			}
			if tt.check != nil {
				tt.check(t, asker.asked[0])
			}
		})
	}
}

func TestModelMistakes(t *testing.T) {
	for _, tt := range []struct{ args, want string }{
		{`{"question":""}`, "ask_user was not asked: question is empty; give the question to ask"},
		{`{"question":"q","options":["A",""]}`, "ask_user was not asked: options[1] is empty; every option needs text"},
		{`{"question":"q","options":["A","B","A"]}`, `ask_user was not asked: options[2] "A" repeats options[0]; options must be unique`},
	} {
		res, err := New("", &oneAsker{t: t}).Call(context.Background(), call(tt.args))
		if err != nil || !res.IsError || res.Text != tt.want {
			t.Errorf("%s: %+v, %v\nwant %q", tt.args, res, err, tt.want)
		}
	}
}

func TestSpec(t *testing.T) {
	spec := New("AskUserQuestion", nil).Spec()
	if spec.Name != "AskUserQuestion" || New("", nil).Spec().Name != "ask_user" {
		t.Errorf("names: %s", spec.Name)
	}
	if _, err := schema.Compile(spec.Parameters); err != nil {
		t.Fatal(err)
	}
}
