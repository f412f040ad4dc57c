//go:build !windows

package tty_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/internal/ptytest"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/tty"
)

// ask runs fe.Ask on the terminal while script plays the person; it returns
// when both are done.
func ask(ctx context.Context, tm *ptytest.Terminal, fe *tty.FrontEnd, q prompt.Question, script func()) (ans prompt.Answer, err error) {
	tm.Drive(script, func() { ans, err = fe.Ask(ctx, q) })
	return ans, err
}

func askOn(t *testing.T, q prompt.Question, script func(tm *ptytest.Terminal)) (prompt.Answer, error, *ptytest.Terminal) {
	t.Helper()
	tm := ptytest.New(t)
	fe := tty.New(tm.Tty(), tm.Tty())
	t.Cleanup(func() { fe.Close() })
	// A test whose keys go astray fails instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ans, err := ask(ctx, tm, fe, q, func() { script(tm) })
	return ans, err, tm
}

func wantAnswer(t *testing.T, got prompt.Answer, err error, action prompt.Action, content, text string) {
	t.Helper()
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if got.Action != action || got.Text != text || got.Source != prompt.SourceTTY {
		t.Fatalf("answer = %+v (content %s), want action %s text %q source tty", got, got.Content, action, text)
	}
	if content == "" {
		if len(got.Content) != 0 {
			t.Fatalf("content = %s, want none", got.Content)
		}
		return
	}
	if !jsonEqual(got.Content, json.RawMessage(content)) {
		t.Fatalf("content = %s, want %s", got.Content, content)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

var envQuestion = prompt.Question{
	Kind:    prompt.KindChoice,
	Message: "Which environment?",
	Title:   "Deploy",
	Hint:    "pick one",
	Options: []prompt.Option{
		{ID: "dev", Label: "Development", Description: "the dev cluster"},
		{ID: "staging", Label: "Staging"},
		{ID: "prod", Label: "Production"},
	},
}

func TestSelectWithArrows(t *testing.T) {
	ans, err, tm := askOn(t, envQuestion, func(tm *ptytest.Terminal) {
		tm.Expect("Production")
		tm.Send(ptytest.KeyDown, ptytest.KeyDown, ptytest.KeyUp, ptytest.KeyEnter)
		tm.Expect("Staging")
	})
	wantAnswer(t, ans, err, prompt.Accept, `"staging"`, "")
	screen := tm.Screen()
	for _, want := range []string{"Deploy", "Which environment?", "Staging"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	t.Logf("screen:\n%s", screen)
}

func TestSelectShowsMessageHintDescriptions(t *testing.T) {
	askOn(t, envQuestion, func(tm *ptytest.Terminal) {
		tm.Expect("Production")
		time.Sleep(50 * time.Millisecond)
		screen := tm.Screen()
		for _, want := range []string{"? Deploy", "  Which environment? (Esc to dismiss)", "  pick one", "Development - the dev cluster"} {
			if !strings.Contains(screen, want) {
				t.Errorf("screen lacks %q:\n%s", want, screen)
			}
		}
		tm.Send(ptytest.KeyEnter)
	})
}

func TestModelTextIsEscaped(t *testing.T) {
	q := prompt.Question{
		Kind:    prompt.KindChoice,
		Message: "Delete \x1b[2Jall\u202e files?",
		Header:  "rm\r",
		Options: []prompt.Option{{ID: "yes", Label: "yes\x1b[31m", Description: "really\x07"}, {ID: "no", Label: "no"}},
	}
	_, _, tm := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.ExpectSettled("(Esc to dismiss)")
		tm.Send(ptytest.KeyDown, ptytest.KeyEnter)
		tm.Expect("no")
	})
	raw := tm.Raw()
	for _, bad := range []string{"\x1b[2J", "\u202e", "\x1b[31m", "\x07", "rm\r"} {
		if strings.Contains(raw, bad) {
			t.Errorf("output carries model text %q unescaped", bad)
		}
	}
	for _, want := range []string{`Delete \x1b[2Jall\u202e files?`, `[rm\x0d]`} {
		if !strings.Contains(tm.Screen(), want) {
			t.Errorf("screen lacks %q:\n%s", want, tm.Screen())
		}
	}
}

func TestSelectDefaultAndConsent(t *testing.T) {
	q := envQuestion
	q.Default = json.RawMessage(`"prod"`)
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.Expect("Production")
		tm.Send(ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"prod"`, "")

	// A consent question's default (written by the model) is not
	// preselected.
	q.Consent = prompt.ConsentConfirm
	ans, err, _ = askOn(t, q, func(tm *ptytest.Terminal) {
		tm.ExpectSettled("Production")
		tm.Send(ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"dev"`, "")
}

func TestApprovalPreselectsNo(t *testing.T) {
	// A shell approval's default is hitl's own refusal: a stray Enter
	// refuses.
	q := prompt.Question{
		Kind: prompt.KindChoice, Message: "Run this command?", Custom: true,
		Options: []prompt.Option{{ID: "once", Label: "Yes, once"}, {ID: "session", Label: "Yes, for this session"}, {ID: "no", Label: "No"}},
		Default: json.RawMessage(`"no"`), Consent: prompt.ConsentApproval,
	}
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.ExpectSettled("for this session")
		tm.Send(ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"no"`, "")
}

func TestModelBooleanDefaultNotPreselected(t *testing.T) {
	// user_prompt {type: boolean, default: true}: the model wrote the
	// default, so Enter alone means no.
	q, err := prompt.FromSchema(json.RawMessage(`{"type":"boolean","default":true}`))
	if err != nil {
		t.Fatal(err)
	}
	q.Message = "Deploy to production?"
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.ExpectSettled("(y/N)")
		tm.Send(ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `false`, "")
}

func TestMultiSelectWithSpace(t *testing.T) {
	q := prompt.Question{
		Kind: prompt.KindChoice, Multiple: true, Message: "Which checks?",
		Options: []prompt.Option{{ID: "lint", Label: "Lint"}, {ID: "test", Label: "Test"}, {ID: "vet", Label: "Vet"}},
	}
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.Expect("Vet")
		tm.Send(" ", ptytest.KeyDown, ptytest.KeyDown, " ", ptytest.KeyEnter)
		tm.Expect("Lint, Vet")
	})
	wantAnswer(t, ans, err, prompt.Accept, `["lint","vet"]`, "")
}

func TestTextInput(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindText, Message: "Branch name?"}
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.ExpectSettled("(Esc to dismiss)")
		tm.Send("feature/x", ptytest.KeyEnter)
		tm.Expect("feature/x")
	})
	wantAnswer(t, ans, err, prompt.Accept, `"feature/x"`, "")
}

func TestTextDefault(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindText, Message: "Branch?", Default: json.RawMessage(`"main"`)}
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.Expect("(main)")
		tm.Send(ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"main"`, "")
}

func TestNumberInput(t *testing.T) {
	q, err := prompt.FromSchema(json.RawMessage(`{"type":"integer","minimum":1,"maximum":10}`))
	if err != nil {
		t.Fatal(err)
	}
	q.Message = "How many replicas?"
	ans, err, tm := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.ExpectSettled("(Esc to dismiss)")
		tm.Send("many", ptytest.KeyEnter)
		tm.Expect("Sorry, your reply was invalid")
		tm.Expect("expected a number")
		tm.Send("42", ptytest.KeyEnter)
		tm.Expect("Sorry, your reply was invalid")
		tm.Send("3", ptytest.KeyEnter)
		tm.Expect("3")
	})
	wantAnswer(t, ans, err, prompt.Accept, `3`, "")
	t.Logf("screen:\n%s", tm.Screen())
}

func TestJSONInput(t *testing.T) {
	q, err := prompt.FromSchema(json.RawMessage(`{"type":"array","items":{"type":"integer"}}`))
	if err != nil {
		t.Fatal(err)
	}
	q.Message = "Ports?"
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.Expect("(JSON)")
		tm.Send("[80, 443]", ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `[80,443]`, "")
}

func TestPasswordIsNotEchoed(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindText, Secret: true, Message: "API token?"}
	ans, err, tm := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.ExpectSettled("(Esc to dismiss)")
		tm.Send("hunter2", ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"hunter2"`, "")
	if strings.Contains(tm.Raw(), "hunter") || strings.Contains(tm.Screen(), "hunter") {
		t.Errorf("the secret was drawn:\n%s", tm.Screen())
	}
	if !strings.Contains(tm.Screen(), "*******") {
		t.Errorf("no mask drawn:\n%s", tm.Screen())
	}
}

func TestConfirm(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindConfirm, Message: "Proceed?"}
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.Expect("(y/N)")
		tm.Send("y", ptytest.KeyEnter)
		tm.Expect("Yes")
	})
	wantAnswer(t, ans, err, prompt.Accept, `true`, "")
}

func TestConfirmDefault(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindConfirm, Message: "Deploy?", Default: json.RawMessage(`true`)}
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.Expect("(Y/n)")
		tm.Send(ptytest.KeyEnter)
		tm.Expect("Yes")
	})
	wantAnswer(t, ans, err, prompt.Accept, `true`, "")

	// On a consent question the model wrote the default: Enter alone
	// means no.
	q.Consent = prompt.ConsentConfirm
	ans, err, _ = askOn(t, q, func(tm *ptytest.Terminal) {
		tm.ExpectSettled("(y/N)")
		tm.Send(ptytest.KeyEnter)
		tm.Expect("No")
	})
	wantAnswer(t, ans, err, prompt.Accept, `false`, "")
}

func TestForm(t *testing.T) {
	q, err := prompt.FromSchema(json.RawMessage(`{"type":"object","title":"Release",
		"properties":{"name":{"type":"string","title":"Service name"},"replicas":{"type":"integer","description":"1 to 5","minimum":1,"maximum":5},"note":{"type":"string"}},
		"required":["name","replicas"]}`))
	if err != nil {
		t.Fatal(err)
	}
	q.Message = "Describe the release"
	ans, err, tm := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.Expect("Service name")
		tm.Send("web", ptytest.KeyEnter)
		tm.Expect("1 to 5")
		tm.Send("9", ptytest.KeyEnter)
		tm.Expect("Sorry, your reply was invalid")
		tm.Send("2", ptytest.KeyEnter)
		tm.Expect("(optional)")
		tm.Send(ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `{"name":"web","replicas":2}`, "")
	if string(ans.Content) != `{"name":"web","replicas":2}` {
		t.Errorf("fields out of order: %s", ans.Content)
	}
	t.Logf("screen:\n%s", tm.Screen())
}

func TestCustomOptionGivesFreeText(t *testing.T) {
	q := envQuestion
	q.Custom = true
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.Expect("Type your own answer")
		tm.Send(ptytest.KeyUp, ptytest.KeyEnter)
		tm.Expect("Your answer:")
		tm.Send(ptytest.KeyEnter)
		tm.Expect("type an answer")
		tm.Send("the blue one", ptytest.KeyEnter)
		tm.Expect("the blue one")
	})
	wantAnswer(t, ans, err, prompt.Accept, "", "the blue one")
}

func TestEscDismisses(t *testing.T) {
	for name, q := range map[string]prompt.Question{
		"choice":   envQuestion,
		"multiple": {Kind: prompt.KindChoice, Multiple: true, Message: "Which?", Options: []prompt.Option{{ID: "a", Label: "A"}}},
		"text":     {Kind: prompt.KindText, Message: "Name?"},
		"secret":   {Kind: prompt.KindText, Secret: true, Message: "Token?"},
		"confirm":  {Kind: prompt.KindConfirm, Message: "Sure?"},
	} {
		t.Run(name, func(t *testing.T) {
			ans, err, tm := askOn(t, q, func(tm *ptytest.Terminal) {
				tm.ExpectSettled("(Esc to dismiss)")
				tm.Send(ptytest.KeyEsc)
				tm.Expect("(dismissed)")
			})
			wantAnswer(t, ans, err, prompt.Cancel, "", "")
			t.Logf("screen:\n%s", tm.Screen())
		})
	}
}

func TestCtrlDDismissesAndNeverSubmits(t *testing.T) {
	for _, q := range []prompt.Question{envQuestion, {Kind: prompt.KindText, Message: "Name?"}} {
		t.Run(string(q.Kind), func(t *testing.T) {
			ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
				tm.ExpectSettled("(Esc to dismiss)")
				tm.Send(ptytest.KeyCtrlD)
				tm.Expect("(dismissed)")
			})
			wantAnswer(t, ans, err, prompt.Cancel, "", "")
		})
	}
}

func TestCtrlCInterrupts(t *testing.T) {
	for name, q := range map[string]prompt.Question{
		"choice": envQuestion,
		"text":   {Kind: prompt.KindText, Message: "Name?"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err, tm := askOn(t, q, func(tm *ptytest.Terminal) {
				tm.ExpectSettled("(Esc to dismiss)")
				tm.Send(ptytest.KeyCtrlC)
				tm.Expect("(interrupted)")
			})
			if !errors.Is(err, prompt.ErrInterrupted) {
				t.Fatalf("err = %v, want ErrInterrupted", err)
			}
			t.Logf("screen:\n%s", tm.Screen())
		})
	}
}

func TestTimeoutCollapsesPrompt(t *testing.T) {
	for name, q := range map[string]prompt.Question{
		"text":    {Kind: prompt.KindText, Message: "Name?"},
		"secret":  {Kind: prompt.KindText, Secret: true, Message: "Token?"},
		"confirm": {Kind: prompt.KindConfirm, Message: "Sure?"},
	} {
		t.Run(name, func(t *testing.T) {
			tm := ptytest.New(t)
			fe := tty.New(tm.Tty(), tm.Tty())
			ctx, cancel := context.WithTimeoutCause(context.Background(), 300*time.Millisecond, errTestTimeout)
			defer cancel()
			_, err := ask(ctx, tm, fe, q, func() {
				tm.Expect("(Esc to dismiss)")
				tm.Expect("(no answer)")
			})
			if !errors.Is(err, errTestTimeout) {
				t.Fatalf("err = %v", err)
			}
			t.Logf("screen:\n%s", tm.Screen())
		})
	}
}

var errTestTimeout = errors.New("test prompt timeout")

func TestTimeoutEndsPromptAndNextPromptGetsKeys(t *testing.T) {
	tm := ptytest.New(t)
	fe := tty.New(tm.Tty(), tm.Tty())
	before := tm.Modes()

	ctx, cancel := context.WithTimeoutCause(context.Background(), 500*time.Millisecond, errTestTimeout)
	defer cancel()
	start := time.Now()
	_, err := ask(ctx, tm, fe, envQuestion, func() {
		tm.Expect("Production")
		tm.Expect("(no answer)")
	})
	if !errors.Is(err, errTestTimeout) {
		t.Fatalf("err = %v, want the context's cause", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the prompt took %v to end", d)
	}
	if after := tm.Modes(); !reflect.DeepEqual(before, after) {
		t.Errorf("terminal modes not restored after the timeout")
	}

	// The reader left blocked by the first prompt hands its keys to the
	// next one; keys pressed while no question is shown are dropped.
	tm.Send(ptytest.KeyEnter)
	time.Sleep(100 * time.Millisecond)
	ans, err := ask(context.Background(), tm, fe, envQuestion, func() {
		tm.Expect("Production")
		tm.Send(ptytest.KeyDown, ptytest.KeyEnter)
		tm.Expect("Staging")
	})
	wantAnswer(t, ans, err, prompt.Accept, `"staging"`, "")
	if after := tm.Modes(); !reflect.DeepEqual(before, after) {
		t.Errorf("terminal modes not restored after an answer")
	}
}

func TestCancelledContextAsksNothing(t *testing.T) {
	tm := ptytest.New(t)
	fe := tty.New(tm.Tty(), tm.Tty())
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errTestTimeout)
	if _, err := fe.Ask(ctx, envQuestion); !errors.Is(err, errTestTimeout) {
		t.Fatalf("err = %v", err)
	}
}

func TestMultiSelectWithCustom(t *testing.T) {
	q := prompt.Question{
		Kind: prompt.KindChoice, Multiple: true, Custom: true, Message: "Which colours?",
		Options: []prompt.Option{{ID: "r", Label: "Red"}, {ID: "g", Label: "Green"}},
	}
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.Expect("Type your own answer")
		tm.Send(" ", ptytest.KeyUp, " ", ptytest.KeyEnter)
		tm.Expect("Your answer:")
		tm.Send("teal", ptytest.KeyEnter)
		tm.Expect("teal")
	})
	wantAnswer(t, ans, err, prompt.Accept, "", "Red, teal")
}

func TestEscapedDefaultAnswersRaw(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindText, Message: "Colour?", Default: json.RawMessage(`"red\u001b[0m"`)}
	ans, err, tm := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.Expect("(red\x1b[7m\\x1b\x1b[27m[0m)") // the escape in reverse video
		tm.Send(ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"red\u001b[0m"`, "")
	if strings.Contains(tm.Raw(), "red\x1b[0m") {
		t.Errorf("the default was drawn unescaped")
	}
}

// A form that also holds a yes/no field (MCP server-everything's does):
// every other field shows its default and Enter takes it, since a person
// saw it; the yes/no field itself still starts on No.
func TestFormWithAYesNoFieldShowsDefaults(t *testing.T) {
	q, err := prompt.FromSchema(json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","title":"Name","default":"demo"},
		"replicas":{"type":"integer","title":"Replicas","default":3},
		"verbose":{"type":"boolean","title":"Verbose"}},"required":["name","replicas","verbose"]}`))
	if err != nil {
		t.Fatal(err)
	}
	q.Message = "Configure"
	ans, err, _ := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.ExpectSettled("(demo)")
		tm.Send(ptytest.KeyEnter)
		tm.ExpectSettled("(3)")
		tm.Send(ptytest.KeyEnter)
		tm.ExpectSettled("(y/N)")
		tm.Send(ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `{"name":"demo","replicas":3,"verbose":false}`, "")
}

// A multi-select field's minItems is checked on that field: too few
// choices ask that field again, not every field of the form from the first.
func TestFormFieldMinItemsAsksThatFieldAgain(t *testing.T) {
	q, err := prompt.FromSchema(json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","title":"Name"},
		"features":{"type":"array","title":"Features","items":{"type":"string","enum":["metrics","traces","logs"]},"minItems":1}},"required":["name","features"]}`))
	if err != nil {
		t.Fatal(err)
	}
	q.Message = "Configure"
	ans, err, tm := askOn(t, q, func(tm *ptytest.Terminal) {
		tm.ExpectSettled("Name")
		tm.Send("svc", ptytest.KeyEnter)
		tm.ExpectSettled("metrics")
		tm.Send(ptytest.KeyEnter) // nothing chosen
		tm.Expect("minItems")
		tm.ExpectSettled("metrics")
		tm.Send(" ", ptytest.KeyEnter) // metrics
	})
	wantAnswer(t, ans, err, prompt.Accept, `{"features":["metrics"],"name":"svc"}`, "")
	if n := strings.Count(tm.Raw(), "Name"); n > 2 {
		t.Errorf("the whole form was asked again (Name drawn %d times)", n)
	}
}
