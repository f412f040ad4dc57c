//go:build !windows

package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/askuser"
	"github.com/hitl-dev/hitl/exec/tools/askuserquestion"
	"github.com/hitl-dev/hitl/exec/tools/interaction"
	"github.com/hitl-dev/hitl/internal/ptytest"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/tty"
)

// person plays the person at the terminal.
type person struct {
	tm      *ptytest.Terminal
	screens []string // the screen each time a question was seen
}

// then waits for text on the terminal, keeps the screen, then sends keys.
func (p *person) then(text string, keys ...string) {
	if !p.tm.ExpectSettled(text) {
		return
	}
	p.screens = append(p.screens, p.tm.Screen())
	p.tm.Send(keys...)
}

// ttyRun calls the tool built by mk with args, its questions asked by the
// terminal front end on a pseudo-terminal; keys plays the person. It returns
// the result, the error, and the screens the person saw, one after another.
func ttyRun(t *testing.T, mk func(prompt.FrontEnd) exec.Tool, args string, keys func(p *person)) (res exec.Result, err error, screens string) {
	t.Helper()
	tm := ptytest.New(t)
	p := &person{tm: tm}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tool := mk(tty.New(tm.Tty(), tm.Tty()))
	tm.Drive(func() { keys(p) }, func() {
		res, err = tool.Call(ctx, exec.ToolCall{ID: "call_1", Name: tool.Spec().Name, Arguments: json.RawMessage(args)})
	})
	return res, err, strings.Join(append(p.screens, tm.Screen()), "\n")
}

func asker(fe prompt.FrontEnd) *prompt.Asker {
	return &prompt.Asker{FrontEnd: fe, Unanswered: prompt.UnansweredStop}
}

const auqArgs = `{"questions":[
{"question":"Which database should we use?","header":"Database","options":[{"label":"PostgreSQL","description":"Relational with advanced features"},{"label":"SQLite","description":"Lightweight embedded database"}]},
{"question":"Which features do you want?","header":"Features","multiSelect":true,"options":[{"label":"Caching","description":"Response caching"},{"label":"Logging","description":"Detailed logs"},{"label":"Metrics","description":"Performance monitoring"}]}]}`

func TestTTYAskUserQuestion(t *testing.T) {
	mk := func(fe prompt.FrontEnd) exec.Tool { return askuserquestion.New("", asker(fe)) }
	t.Run("answers", func(t *testing.T) {
		res, err, _ := ttyRun(t, mk, auqArgs, func(p *person) {
			p.then("Lightweight embedded database", ptytest.KeyDown, ptytest.KeyEnter)
			p.then("Performance monitoring", ptytest.KeySpace, ptytest.KeyDown, ptytest.KeyDown, ptytest.KeySpace, ptytest.KeyEnter)
		})
		if err != nil || res.IsError {
			t.Fatalf("result %+v, %v", res, err)
		}
		if want := `{"answers":{"Database":"SQLite","Features":"Caching, Metrics"}}`; res.Text != want {
			t.Errorf("result %s\nwant %s", res.Text, want)
		}
	})
	t.Run("header, position and descriptions drawn", func(t *testing.T) {
		_, _, screen := ttyRun(t, mk, auqArgs, func(p *person) {
			p.then("Lightweight embedded database", ptytest.KeyEsc)
		})
		for _, want := range []string{"(1 of 2) [Database]", "Which database should we use?", "Relational with advanced features", "Esc to dismiss"} {
			if !strings.Contains(screen, want) {
				t.Errorf("the screen lacks %q:\n%s", want, screen)
			}
		}
		if strings.Contains(screen, "Type your own answer") {
			t.Errorf("AskUserQuestion takes no custom input, but the screen offers it:\n%s", screen)
		}
	})
	t.Run("Esc interrupts", func(t *testing.T) {
		res, err, _ := ttyRun(t, mk, auqArgs, func(p *person) {
			p.then("Lightweight embedded database", ptytest.KeyEnter)
			p.then("Performance monitoring", ptytest.KeyEsc)
		})
		if err != nil || !res.IsError || res.Text != "Interrupted" || res.End == nil || res.End.Status != exec.StatusCancelled {
			t.Fatalf("result %+v, %v: want Interrupted, the run cancelled", res, err)
		}
		if want := "the user dismissed AskUserQuestion question 2 of 2 (Features)"; res.End.Text != want {
			t.Errorf("outcome %q, want %q", res.End.Text, want)
		}
	})
}

func TestTTYAskUser(t *testing.T) {
	mk := func(fe prompt.FrontEnd) exec.Tool { return askuser.New("", asker(fe)) }
	tests := []struct {
		name, args string
		keys       func(p *person)
		want       string
		isError    bool
		screen     []string
	}{
		{
			name:   "text with hint",
			args:   `{"question":"What is the target deployment environment?","hint":"e.g. AWS, GCP, Azure"}`,
			keys:   func(p *person) { p.then("e.g. AWS, GCP, Azure", "GCP", ptytest.KeyEnter) },
			want:   `{"question":"What is the target deployment environment?","answer":"GCP"}`,
			screen: []string{"What is the target deployment environment? (Esc to dismiss)", "  e.g. AWS, GCP, Azure"},
		},
		{
			name: "single choice",
			args: `{"question":"Which testing framework?","options":["Vitest (Recommended)","Jest","Mocha"],"custom":false}`,
			keys: func(p *person) { p.then("Mocha", ptytest.KeyDown, ptytest.KeyEnter) },
			want: `{"question":"Which testing framework?","answer":"Jest"}`,
		},
		{
			name: "multiple",
			args: `{"question":"Which linters?","options":["eslint","prettier","stylelint"],"multiple":true,"custom":false}`,
			keys: func(p *person) {
				p.then("stylelint", ptytest.KeyDown, ptytest.KeyDown, ptytest.KeySpace, ptytest.KeyUp, ptytest.KeyUp, ptytest.KeySpace, ptytest.KeyEnter)
			},
			want: `{"question":"Which linters?","answer":"eslint, stylelint"}`,
		},
		{
			name: "own answer (custom defaults to true)",
			args: `{"question":"Which testing framework?","options":["Jest","Mocha"]}`,
			keys: func(p *person) {
				p.then("Type your own answer", ptytest.KeyDown, ptytest.KeyDown, ptytest.KeyEnter)
				p.then("Your answer:", "Jasmine", ptytest.KeyEnter)
			},
			want: `{"question":"Which testing framework?","answer":"Jasmine"}`,
		},
		{
			name: "multiple with own answer: chosen labels and the text, as typed",
			args: `{"question":"Which checks?","options":["lint","test"],"multiple":true}`,
			keys: func(p *person) {
				p.then("Type your own answer", ptytest.KeySpace, ptytest.KeyDown, ptytest.KeyDown, ptytest.KeySpace, ptytest.KeyEnter)
				p.then("Your answer:", "fuzz", ptytest.KeyEnter)
			},
			want: `{"question":"Which checks?","answer":"lint, fuzz"}`,
		},
		{
			name: "Esc dismisses",
			args: `{"question":"Which testing framework?","options":["Jest","Mocha"]}`,
			keys: func(p *person) { p.then("Mocha", ptytest.KeyEsc) },
			want: "The user dismissed the question.", isError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err, screen := ttyRun(t, mk, tt.args, func(p *person) {
				tt.keys(p)
			})
			if err != nil || res.Text != tt.want || res.IsError != tt.isError {
				t.Errorf("result %+v, %v\nwant %s\nscreen:\n%s", res, err, tt.want, screen)
			}
			for _, want := range tt.screen {
				if !strings.Contains(screen, want) {
					t.Errorf("the screen lacks %q:\n%s", want, screen)
				}
			}
		})
	}
}

func TestTTYInteraction(t *testing.T) {
	confirm := func(fe prompt.FrontEnd) exec.Tool { return interaction.New(asker(fe))[0] }
	question := func(fe prompt.FrontEnd) exec.Tool { return interaction.New(asker(fe))[1] }
	const confirmArgs = `{"question":"Deploy weather-bot to production?","target_tool":"deploy_agent"}`
	const id = `{"interaction_id":"call_1",`
	tests := []struct {
		name   string
		mk     func(prompt.FrontEnd) exec.Tool
		args   string
		keys   func(p *person)
		want   string
		screen []string
	}{
		{
			name: "confirm: Enter out of habit is no", mk: confirm, args: confirmArgs,
			keys:   func(p *person) { p.then("Type your own answer", ptytest.KeyEnter) },
			want:   id + `"selected_option_id":"no","free_text":null,"confirmed":false,"cancelled":false}`,
			screen: []string{"If approved, the agent calls deploy_agent.", "> No", "No — tell me what to change", "Yes", "Type your own answer"},
		},
		{
			name: "confirm yes", mk: confirm, args: confirmArgs,
			keys: func(p *person) { p.then("Type your own answer", ptytest.KeyDown, ptytest.KeyDown, ptytest.KeyEnter) },
			want: id + `"selected_option_id":"yes","free_text":null,"confirmed":true,"cancelled":false}`,
		},
		{
			name: "confirm no with feedback asks for the notes", mk: confirm, args: confirmArgs,
			keys: func(p *person) {
				p.then("Type your own answer", ptytest.KeyDown, ptytest.KeyEnter)
				p.then("What should change?", "canary first", ptytest.KeyEnter)
			},
			want: id + `"selected_option_id":"no_with_feedback","free_text":"canary first","confirmed":false,"cancelled":false}`,
		},
		{
			name: "confirm own text is feedback", mk: confirm, args: confirmArgs,
			keys: func(p *person) {
				p.then("Type your own answer", ptytest.KeyDown, ptytest.KeyDown, ptytest.KeyDown, ptytest.KeyEnter)
				p.then("Your answer:", "not today", ptytest.KeyEnter)
			},
			want: id + `"selected_option_id":"no_with_feedback","free_text":"not today","confirmed":false,"cancelled":false}`,
		},
		{
			name: "confirm Esc", mk: confirm, args: confirmArgs,
			keys: func(p *person) { p.then("Type your own answer", ptytest.KeyEsc) },
			want: id + `"selected_option_id":null,"free_text":null,"confirmed":false,"cancelled":true}`,
		},
		{
			name: "question option", mk: question,
			args: `{"question":"Which data source?","options":[{"id":"postgres","label":"PostgreSQL"},{"id":"bigquery","label":"BigQuery","description":"Google Cloud warehouse"}]}`,
			keys: func(p *person) { p.then("Google Cloud warehouse", ptytest.KeyDown, ptytest.KeyEnter) },
			want: id + `"selected_option_id":"bigquery","free_text":null,"confirmed":null,"cancelled":false}`,
		},
		{
			name: "question open", mk: question, args: `{"question":"What should the report be called?"}`,
			keys: func(p *person) { p.then("report be called?", "Q3 revenue", ptytest.KeyEnter) },
			want: id + `"selected_option_id":null,"free_text":"Q3 revenue","confirmed":null,"cancelled":false}`,
		},
		{
			name: "question Esc", mk: question, args: `{"question":"What should the report be called?"}`,
			keys: func(p *person) { p.then("report be called?", ptytest.KeyEsc) },
			want: id + `"selected_option_id":null,"free_text":null,"confirmed":null,"cancelled":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err, screen := ttyRun(t, tt.mk, tt.args, func(p *person) {
				tt.keys(p)
			})
			if err != nil || res.IsError || res.Text != tt.want {
				t.Errorf("result %+v, %v\nwant %s\nscreen:\n%s", res, err, tt.want, screen)
			}
			for _, want := range tt.screen {
				if !strings.Contains(screen, want) {
					t.Errorf("the screen lacks %q:\n%s", want, screen)
				}
			}
		})
	}
}
