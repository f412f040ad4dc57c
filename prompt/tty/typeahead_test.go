//go:build linux

package tty_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hitl-dev/hitl/internal/ptytest"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/tty"
)

// waiting asks q on fe while person plays; person gets a function saying
// whether Ask has returned yet.
func waiting(t *testing.T, tm *ptytest.Terminal, fe *tty.FrontEnd, q prompt.Question, person func(returned func() bool)) (prompt.Answer, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var done atomic.Bool
	var (
		ans prompt.Answer
		err error
	)
	tm.Drive(func() { person(done.Load) }, func() {
		ans, err = fe.Ask(ctx, q)
		done.Store(true)
	})
	return ans, err
}

// stillAsking fails the test if the question was answered by keys typed
// before it was on the screen.
func stillAsking(t *testing.T, tm *ptytest.Terminal, returned func() bool, what string) {
	t.Helper()
	time.Sleep(500 * time.Millisecond)
	if returned() {
		t.Errorf("%s answered the question; screen:\n%s", what, tm.Screen())
	}
}

var approval = prompt.Question{
	Kind: prompt.KindChoice, Message: "Run this command?\n  make deploy", Custom: true,
	Options: []prompt.Option{{ID: "once", Label: "Yes, once"}, {ID: "session", Label: "Yes, for this session"}, {ID: "no", Label: "No"}},
	Default: json.RawMessage(`"no"`), Consent: prompt.ConsentApproval,
}

// Keys typed before a question (while a command runs or the model thinks)
// never answer it: Enter, and y Enter, typed before the first question,
// between two questions, and before a later one.
func TestTypeAheadNeverAnswers(t *testing.T) {
	tm := ptytest.New(t)
	fe := tty.New(tm.Tty(), tm.Tty())
	t.Cleanup(func() { fe.Close() })
	for i, keys := range [][]string{
		{ptytest.KeyEnter},
		{"y", ptytest.KeyEnter},
		{ptytest.KeyDown, ptytest.KeyDown, ptytest.KeyEnter, "y", ptytest.KeyEnter},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			// Typed while no question is on the screen.
			tm.Send(keys...)
			time.Sleep(100 * time.Millisecond)
			ans, err := waiting(t, tm, fe, envQuestion, func(returned func() bool) {
				if !tm.Expect("Production") {
					return
				}
				stillAsking(t, tm, returned, fmt.Sprintf("%q typed ahead", keys))
				tm.Send(ptytest.KeyDown, ptytest.KeyEnter)
				tm.Expect("Staging")
			})
			wantAnswer(t, ans, err, prompt.Accept, `"staging"`, "")
		})
	}
}

// An Enter pressed twice to answer one question does not answer the next.
func TestSecondEnterDoesNotAnswerTheNextQuestion(t *testing.T) {
	tm := ptytest.New(t)
	fe := tty.New(tm.Tty(), tm.Tty())
	t.Cleanup(func() { fe.Close() })
	ans, err := waiting(t, tm, fe, envQuestion, func(func() bool) {
		tm.Expect("Production")
		tm.Send(ptytest.KeyEnter, ptytest.KeyEnter, ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"dev"`, "")
	time.Sleep(50 * time.Millisecond) // the model thinks
	ans, err = waiting(t, tm, fe, envQuestion, func(returned func() bool) {
		tm.Expect("Production")
		stillAsking(t, tm, returned, "the extra Enter")
		tm.Send(ptytest.KeyUp, ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"prod"`, "")
}

// A consent question takes no key for its first moments on the screen.
func TestConsentQuestionHoldsKeys(t *testing.T) {
	// Longer than DESIGN's 300 ms, so that keys sent at once are inside
	// the hold on a loaded machine too; those sent after it, outside.
	const hold = 2 * time.Second
	tty.SetConsentHold(t, hold)
	tm := ptytest.New(t)
	fe := tty.New(tm.Tty(), tm.Tty())
	t.Cleanup(func() { fe.Close() })
	ans, err := waiting(t, tm, fe, approval, func(returned func() bool) {
		if !tm.Expect("Yes, for this session") {
			return
		}
		drawn := time.Now()                      // the question was drawn before this
		tm.Send(ptytest.KeyUp, ptytest.KeyEnter) // at once: too early
		stillAsking(t, tm, returned, "keys pressed as the approval was drawn")
		time.Sleep(time.Until(drawn.Add(hold + 200*time.Millisecond)))
		tm.Send(ptytest.KeyUp, ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"session"`, "")
}

func lflag(t *testing.T, tm *ptytest.Terminal) uint32 {
	t.Helper()
	st, err := unix.IoctlGetTermios(int(tm.Tty().Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return st.Lflag
}

// Keys typed while no question is on the screen are not echoed, and Close
// puts the terminal back as it was.
func TestNoEchoBetweenQuestions(t *testing.T) {
	tm := ptytest.New(t)
	before := lflag(t, tm)
	if before&unix.ECHO == 0 {
		t.Fatal("the test terminal does not echo to begin with")
	}
	fe := tty.New(tm.Tty(), tm.Tty())
	if got := lflag(t, tm); got&unix.ECHO != 0 || got&unix.ISIG == 0 {
		t.Errorf("between questions: lflag %#x, want no ECHO and ISIG kept", got)
	}
	tm.Send("typed-while-running")
	time.Sleep(100 * time.Millisecond)
	ans, err := waiting(t, tm, fe, envQuestion, func(func() bool) {
		tm.ExpectSettled("Production")
		tm.Send(ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"dev"`, "")
	if strings.Contains(tm.Raw(), "typed-while-running") {
		t.Errorf("keys typed between questions were echoed:\n%s", tm.Screen())
	}
	fe.Close()
	if got := lflag(t, tm); got != before {
		t.Errorf("after Close: lflag %#x, want %#x", got, before)
	}
}

// A remote user_choice preselects its default and says what Esc sends; a
// model's yes/no choice preselects the refusal, whatever its default.
func TestConsentChoicePreselection(t *testing.T) {
	remote := prompt.Question{
		Kind: prompt.KindChoice, Message: "Allow writing?", Tool: "write_file",
		Options: []prompt.Option{{ID: "Yes for session", Label: "Yes for session"}, {ID: "Yes once", Label: "Yes once"}, {ID: "No", Label: "No"}},
		Default: json.RawMessage(`"No"`), Consent: prompt.ConsentChoice,
	}
	yesNo := prompt.Question{
		Kind: prompt.KindChoice, Message: "Proceed?",
		Options: []prompt.Option{{ID: "yes", Label: "yes"}, {ID: "no", Label: "no"}},
		Default: json.RawMessage(`"yes"`), Consent: prompt.ConsentConfirm,
	}
	tests := []struct {
		name   string
		q      prompt.Question
		shown  string
		answer string
	}{
		{"remote user_choice", remote, "(Esc: dismiss, sends the default: No)", `"No"`},
		{"yes/no enum", yesNo, "(Esc to dismiss)", `"no"`},
		{"approval", approval, "(Esc to dismiss)", `"no"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans, err, _ := askOn(t, tt.q, func(tm *ptytest.Terminal) {
				if tm.ExpectSettled(tt.shown) {
					tm.Send(ptytest.KeyEnter)
				}
			})
			wantAnswer(t, ans, err, prompt.Accept, tt.answer, "")
		})
	}
}

// A command taller than the terminal shows its first lines (a harmful first
// line), how many lines were left out, and its last lines; it offers only
// viewing it whole or No (Enter: No) until the person has read it all.
func TestTallCommandShowsBothEnds(t *testing.T) {
	lines := []string{"Run this command?", "rm -rf ~/important && cat > /tmp/notes <<'EOF'"}
	for i := range 80 {
		lines = append(lines, fmt.Sprintf("harmless note %d", i))
	}
	lines = append(lines, "EOF")
	q := approval
	q.Message = strings.Join(lines, "\n")
	tm := ptytest.NewSize(t, 100, 30)
	fe := tty.New(tm.Tty(), tm.Tty())
	t.Cleanup(func() { fe.Close() })
	var screen string
	ans, err := waiting(t, tm, fe, q, func(func() bool) {
		if !tm.ExpectSettled("View the whole text") {
			return
		}
		screen = tm.Screen()
		tm.Send(ptytest.KeyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"no"`, "")
	for _, want := range []string{"rm -rf ~/important", "lines left out", "harmless note 79", "EOF", "No"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "Yes, once") {
		t.Errorf("approving options offered before the text was viewed:\n%s", screen)
	}
}

// A remote user_choice whose prompt is taller than the terminal: none of
// its options (only the tool server knows which refuses) is offered until
// the person has viewed the whole prompt; Esc still dismisses.
func TestTallRemoteChoiceIsViewedFirst(t *testing.T) {
	lines := []string{"Apply this change?"}
	for i := range 80 {
		lines = append(lines, fmt.Sprintf("changed line %d", i))
	}
	q := prompt.Question{
		Kind: prompt.KindChoice, Consent: prompt.ConsentChoice, Message: strings.Join(lines, "\n"),
		Options: []prompt.Option{{ID: "0", Label: "Apply"}, {ID: "1", Label: "Skip"}},
		Default: json.RawMessage(`"1"`),
	}
	tm := ptytest.NewSize(t, 100, 30)
	fe := tty.New(tm.Tty(), tm.Tty())
	t.Cleanup(func() { fe.Close() })
	var screen string
	ans, err := waiting(t, tm, fe, q, func(func() bool) {
		if !tm.ExpectSettled("View the whole text") {
			return
		}
		screen = tm.Screen()
		tm.Send(ptytest.KeyEsc)
	})
	wantAnswer(t, ans, err, prompt.Cancel, "", "")
	if strings.Contains(screen, "Apply\n") || strings.Contains(screen, "> Apply") || strings.Contains(screen, "  Skip") {
		t.Errorf("options offered before the prompt was viewed:\n%s", screen)
	}
}
