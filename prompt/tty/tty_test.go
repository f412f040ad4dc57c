//go:build !windows

package tty_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	expect "github.com/Netflix/go-expect"
	pseudotty "github.com/creack/pty"
	"github.com/hinshun/vt10x"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/tty"
	"golang.org/x/term"
)

// Keys as a terminal sends them.
const (
	keyUp    = "\x1b[A"
	keyDown  = "\x1b[B"
	keyEnter = "\r"
	keyEsc   = "\x1b"
	keyCtrlC = "\x03"
	keyCtrlD = "\x04"
)

// lockedBuffer collects everything the program drew.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// terminal is a pseudo-terminal whose output goes through a vt10x screen,
// which answers survey's cursor position queries (ESC[6n), as survey's own
// tests do.
type terminal struct {
	t    *testing.T
	c    *expect.Console
	term vt10x.Terminal
	raw  *lockedBuffer
}

func newTerminal(t *testing.T) *terminal {
	t.Helper()
	ptm, pts, err := pseudotty.Open()
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	screen := vt10x.New(vt10x.WithWriter(pts), vt10x.WithSize(100, 40))
	raw := &lockedBuffer{}
	c, err := expect.NewConsole(
		expect.WithStdin(ptm),
		expect.WithStdout(screen, raw),
		expect.WithCloser(ptm, pts),
		expect.WithDefaultTimeout(5*time.Second),
	)
	if err != nil {
		t.Fatalf("console: %v", err)
	}
	// The size survey reads (to count wrapped lines) matches the screen's.
	if err := pseudotty.Setsize(c.Tty(), &pseudotty.Winsize{Cols: 100, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &terminal{t: t, c: c, term: screen, raw: raw}
}

// expect waits for s in the output.
func (tm *terminal) expect(s string) {
	tm.t.Helper()
	if out, err := tm.c.ExpectString(s); err != nil {
		tm.t.Errorf("waiting for %q: %v; output so far:\n%q", s, err, out)
	}
}

func (tm *terminal) send(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		if _, err := tm.c.Send(k); err != nil {
			tm.t.Errorf("send %q: %v", k, err)
		}
		// Separate reads, as separate key presses are.
		time.Sleep(20 * time.Millisecond)
	}
}

// ask runs fe.Ask on the terminal while script plays the person; it returns
// when both are done.
func (tm *terminal) ask(ctx context.Context, fe *tty.FrontEnd, q prompt.Question, script func()) (prompt.Answer, error) {
	tm.t.Helper()
	done, asked := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		script()
		// Keep reading until Ask returns, so the screen answers the
		// cursor queries that follow the last key, and take in the
		// last drawing.
		for {
			_, _ = tm.c.Expect(expect.String("\x00never\x00"), expect.WithTimeout(30*time.Millisecond))
			select {
			case <-asked:
				_, _ = tm.c.Expect(expect.String("\x00never\x00"), expect.WithTimeout(30*time.Millisecond))
				return
			default:
			}
		}
	}()
	ans, err := fe.Ask(ctx, q)
	close(asked)
	<-done
	return ans, err
}

// screen is what the terminal shows, without trailing blanks.
func (tm *terminal) screen() string {
	lines := strings.Split(tm.term.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

func askOn(t *testing.T, q prompt.Question, script func(tm *terminal)) (prompt.Answer, error, *terminal) {
	t.Helper()
	tm := newTerminal(t)
	fe := tty.New(tm.c.Tty(), tm.c.Tty())
	ans, err := tm.ask(context.Background(), fe, q, func() { script(tm) })
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
	ans, err, tm := askOn(t, envQuestion, func(tm *terminal) {
		tm.expect("Production")
		tm.send(keyDown, keyDown, keyUp, keyEnter)
		tm.expect("Staging")
	})
	wantAnswer(t, ans, err, prompt.Accept, `"staging"`, "")
	screen := tm.screen()
	for _, want := range []string{"Deploy", "Which environment?", "Staging"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	t.Logf("screen:\n%s", screen)
}

func TestSelectShowsMessageHintDescriptions(t *testing.T) {
	askOn(t, envQuestion, func(tm *terminal) {
		tm.expect("Production")
		time.Sleep(50 * time.Millisecond)
		screen := tm.screen()
		for _, want := range []string{"? Deploy", "  Which environment? (Esc to dismiss)", "  pick one", "Development - the dev cluster"} {
			if !strings.Contains(screen, want) {
				t.Errorf("screen lacks %q:\n%s", want, screen)
			}
		}
		tm.send(keyEnter)
	})
}

func TestModelTextIsEscaped(t *testing.T) {
	q := prompt.Question{
		Kind:    prompt.KindChoice,
		Message: "Delete \x1b[2Jall\u202e files?",
		Header:  "rm\r",
		Options: []prompt.Option{{ID: "yes", Label: "yes\x1b[31m", Description: "really\x07"}, {ID: "no", Label: "no"}},
	}
	_, _, tm := askOn(t, q, func(tm *terminal) {
		tm.expect("(Esc to dismiss)")
		tm.send(keyDown, keyEnter)
		tm.expect("no")
	})
	raw := tm.raw.String()
	for _, bad := range []string{"\x1b[2J", "\u202e", "\x1b[31m", "\x07", "rm\r"} {
		if strings.Contains(raw, bad) {
			t.Errorf("output carries model text %q unescaped", bad)
		}
	}
	for _, want := range []string{`Delete \x1b[2Jall\u202e files?`, `[rm\x0d]`} {
		if !strings.Contains(tm.screen(), want) {
			t.Errorf("screen lacks %q:\n%s", want, tm.screen())
		}
	}
}

func TestSelectDefaultAndConsent(t *testing.T) {
	q := envQuestion
	q.Default = json.RawMessage(`"prod"`)
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("Production")
		tm.send(keyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"prod"`, "")

	// A consent question's default (written by the model) is not
	// preselected.
	q.Consent = true
	ans, err, _ = askOn(t, q, func(tm *terminal) {
		tm.expect("Production")
		tm.send(keyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"dev"`, "")
}

func TestApprovalPreselectsNo(t *testing.T) {
	// A shell approval's default is hitl's own refusal: a stray Enter
	// refuses.
	q := prompt.Question{
		Kind: prompt.KindChoice, Message: "Run this command?", Custom: true,
		Options: []prompt.Option{{ID: "once", Label: "Yes, once"}, {ID: "session", Label: "Yes, for this session"}, {ID: "no", Label: "No"}},
		Default: json.RawMessage(`"no"`), Consent: true, SafeDefault: true, NoStop: true,
	}
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("for this session")
		tm.send(keyEnter)
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
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("(y/N)")
		tm.send(keyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `false`, "")
}

func TestMultiSelectWithSpace(t *testing.T) {
	q := prompt.Question{
		Kind: prompt.KindChoice, Multiple: true, Message: "Which checks?",
		Options: []prompt.Option{{ID: "lint", Label: "Lint"}, {ID: "test", Label: "Test"}, {ID: "vet", Label: "Vet"}},
	}
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("Vet")
		tm.send(" ", keyDown, keyDown, " ", keyEnter)
		tm.expect("Lint, Vet")
	})
	wantAnswer(t, ans, err, prompt.Accept, `["lint","vet"]`, "")
}

func TestTextInput(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindText, Message: "Branch name?"}
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("(Esc to dismiss)")
		tm.send("feature/x", keyEnter)
		tm.expect("feature/x")
	})
	wantAnswer(t, ans, err, prompt.Accept, `"feature/x"`, "")
}

func TestTextDefault(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindText, Message: "Branch?", Default: json.RawMessage(`"main"`)}
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("(main)")
		tm.send(keyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"main"`, "")
}

func TestNumberInput(t *testing.T) {
	q, err := prompt.FromSchema(json.RawMessage(`{"type":"integer","minimum":1,"maximum":10}`))
	if err != nil {
		t.Fatal(err)
	}
	q.Message = "How many replicas?"
	ans, err, tm := askOn(t, q, func(tm *terminal) {
		tm.expect("(Esc to dismiss)")
		tm.send("many", keyEnter)
		tm.expect("Sorry, your reply was invalid")
		tm.expect("expected a number")
		tm.send("42", keyEnter)
		tm.expect("Sorry, your reply was invalid")
		tm.send("3", keyEnter)
		tm.expect("3")
	})
	wantAnswer(t, ans, err, prompt.Accept, `3`, "")
	t.Logf("screen:\n%s", tm.screen())
}

func TestJSONInput(t *testing.T) {
	q, err := prompt.FromSchema(json.RawMessage(`{"type":"array","items":{"type":"integer"}}`))
	if err != nil {
		t.Fatal(err)
	}
	q.Message = "Ports?"
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("(JSON)")
		tm.send("[80, 443]", keyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `[80,443]`, "")
}

func TestPasswordIsNotEchoed(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindText, Secret: true, Message: "API token?"}
	ans, err, tm := askOn(t, q, func(tm *terminal) {
		tm.expect("(Esc to dismiss)")
		tm.send("hunter2", keyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"hunter2"`, "")
	if strings.Contains(tm.raw.String(), "hunter") || strings.Contains(tm.screen(), "hunter") {
		t.Errorf("the secret was drawn:\n%s", tm.screen())
	}
	if !strings.Contains(tm.screen(), "*******") {
		t.Errorf("no mask drawn:\n%s", tm.screen())
	}
}

func TestConfirm(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindConfirm, Message: "Proceed?"}
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("(y/N)")
		tm.send("y", keyEnter)
		tm.expect("Yes")
	})
	wantAnswer(t, ans, err, prompt.Accept, `true`, "")
}

func TestConfirmDefault(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindConfirm, Message: "Deploy?", Default: json.RawMessage(`true`)}
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("(Y/n)")
		tm.send(keyEnter)
		tm.expect("Yes")
	})
	wantAnswer(t, ans, err, prompt.Accept, `true`, "")

	// On a consent question the model wrote the default: Enter alone
	// means no.
	q.Consent = true
	ans, err, _ = askOn(t, q, func(tm *terminal) {
		tm.expect("(y/N)")
		tm.send(keyEnter)
		tm.expect("No")
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
	ans, err, tm := askOn(t, q, func(tm *terminal) {
		tm.expect("Service name")
		tm.send("web", keyEnter)
		tm.expect("1 to 5")
		tm.send("9", keyEnter)
		tm.expect("Sorry, your reply was invalid")
		tm.send("2", keyEnter)
		tm.expect("(optional)")
		tm.send(keyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `{"name":"web","replicas":2}`, "")
	if string(ans.Content) != `{"name":"web","replicas":2}` {
		t.Errorf("fields out of order: %s", ans.Content)
	}
	t.Logf("screen:\n%s", tm.screen())
}

func TestCustomOptionGivesFreeText(t *testing.T) {
	q := envQuestion
	q.Custom = true
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("Type your own answer")
		tm.send(keyUp, keyEnter)
		tm.expect("Your answer:")
		tm.send(keyEnter)
		tm.expect("type an answer")
		tm.send("the blue one", keyEnter)
		tm.expect("the blue one")
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
			ans, err, tm := askOn(t, q, func(tm *terminal) {
				tm.expect("(Esc to dismiss)")
				tm.send(keyEsc)
				tm.expect("(dismissed)")
			})
			wantAnswer(t, ans, err, prompt.Cancel, "", "")
			t.Logf("screen:\n%s", tm.screen())
		})
	}
}

func TestCtrlDDismissesAndNeverSubmits(t *testing.T) {
	for _, q := range []prompt.Question{envQuestion, {Kind: prompt.KindText, Message: "Name?"}} {
		t.Run(string(q.Kind), func(t *testing.T) {
			ans, err, _ := askOn(t, q, func(tm *terminal) {
				tm.expect("(Esc to dismiss)")
				tm.send(keyCtrlD)
				tm.expect("(dismissed)")
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
			_, err, tm := askOn(t, q, func(tm *terminal) {
				tm.expect("(Esc to dismiss)")
				tm.send(keyCtrlC)
				tm.expect("(interrupted)")
			})
			if !errors.Is(err, prompt.ErrInterrupted) {
				t.Fatalf("err = %v, want ErrInterrupted", err)
			}
			t.Logf("screen:\n%s", tm.screen())
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
			tm := newTerminal(t)
			fe := tty.New(tm.c.Tty(), tm.c.Tty())
			ctx, cancel := context.WithTimeoutCause(context.Background(), 300*time.Millisecond, errTestTimeout)
			defer cancel()
			_, err := tm.ask(ctx, fe, q, func() {
				tm.expect("(Esc to dismiss)")
				tm.expect("(no answer)")
			})
			if !errors.Is(err, errTestTimeout) {
				t.Fatalf("err = %v", err)
			}
			t.Logf("screen:\n%s", tm.screen())
		})
	}
}

// termState reads the terminal's modes through a descriptor of its own.
func termState(t *testing.T, tm *terminal) *term.State {
	t.Helper()
	f, err := os.OpenFile(tm.c.Tty().Name(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := term.GetState(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var errTestTimeout = errors.New("test prompt timeout")

func TestTimeoutEndsPromptAndNextPromptGetsKeys(t *testing.T) {
	tm := newTerminal(t)
	fe := tty.New(tm.c.Tty(), tm.c.Tty())
	before := termState(t, tm)

	ctx, cancel := context.WithTimeoutCause(context.Background(), 500*time.Millisecond, errTestTimeout)
	defer cancel()
	start := time.Now()
	_, err := tm.ask(ctx, fe, envQuestion, func() {
		tm.expect("Production")
		tm.expect("(no answer)")
	})
	if !errors.Is(err, errTestTimeout) {
		t.Fatalf("err = %v, want the context's cause", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the prompt took %v to end", d)
	}
	if after := termState(t, tm); !reflect.DeepEqual(before, after) {
		t.Errorf("terminal modes not restored after the timeout")
	}

	// The reader left blocked by the first prompt hands its keys to the
	// next one; keys pressed while no question is shown are dropped.
	tm.send(keyEnter)
	time.Sleep(100 * time.Millisecond)
	ans, err := tm.ask(context.Background(), fe, envQuestion, func() {
		tm.expect("Production")
		tm.send(keyDown, keyEnter)
		tm.expect("Staging")
	})
	wantAnswer(t, ans, err, prompt.Accept, `"staging"`, "")
	if after := termState(t, tm); !reflect.DeepEqual(before, after) {
		t.Errorf("terminal modes not restored after an answer")
	}
}

func TestCancelledContextAsksNothing(t *testing.T) {
	tm := newTerminal(t)
	fe := tty.New(tm.c.Tty(), tm.c.Tty())
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
	ans, err, _ := askOn(t, q, func(tm *terminal) {
		tm.expect("Type your own answer")
		tm.send(" ", keyUp, " ", keyEnter)
		tm.expect("Your answer:")
		tm.send("teal", keyEnter)
		tm.expect("teal")
	})
	wantAnswer(t, ans, err, prompt.Accept, "", "Red, teal")
}

func TestEscapedDefaultAnswersRaw(t *testing.T) {
	q := prompt.Question{Kind: prompt.KindText, Message: "Colour?", Default: json.RawMessage(`"red\u001b[0m"`)}
	ans, err, tm := askOn(t, q, func(tm *terminal) {
		tm.expect(`(red\x1b[0m)`)
		tm.send(keyEnter)
	})
	wantAnswer(t, ans, err, prompt.Accept, `"red\u001b[0m"`, "")
	if strings.Contains(tm.raw.String(), "red\x1b[0m") {
		t.Errorf("the default was drawn unescaped")
	}
}
