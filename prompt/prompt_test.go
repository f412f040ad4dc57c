package prompt

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		in       string
		skip     bool
		promptID string
		action   Action
		content  string
		text     string
		err      string
	}{
		{in: `{"prompt_id":"p2","action":"accept","content":"staging"}`, promptID: "p2", action: Accept, content: `"staging"`},
		{in: `{"action":"decline"}`, action: Decline},
		{in: `{"action":"cancel"}`, action: Cancel},
		{in: `{"text":"use the blue one"}`, action: Accept, text: "use the blue one"},
		{in: `"staging"`, action: Accept, content: `"staging"`},
		{in: `3`, action: Accept, content: `3`},
		{in: `{"host":"db","port":1}`, action: Accept, content: `{"host":"db","port":1}`},
		{in: `{"content":{"a":1}}`, action: Accept, content: `{"a":1}`},
		{in: "\xef\xbb\xbf\"x\"\r", action: Accept, content: `"x"`},
		{in: "", skip: true},
		{in: "  \r", skip: true},
		{in: `yes`, err: "not JSON"},
		{in: `{"action":"maybe"}`, err: `unknown action "maybe"`},
		{in: `{"prompt_id":3}`, err: `"prompt_id" must be a string`},
		{in: `{"prompt_id":"","content":"yes"}`, err: `"prompt_id" is empty`},
		{in: `{"prompt_id":"p1"}`, err: `no "action", "content" or "text"`},
		{in: `{"text":3}`, err: `"text" must be a string`},
		{in: "\"\xff\"", err: "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			l, skip, err := ParseLine([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || skip != tt.skip {
				t.Fatalf("err %v skip %v", err, skip)
			}
			if skip {
				return
			}
			if l.PromptID != tt.promptID || l.Answer.Action != tt.action || string(l.Answer.Content) != tt.content || l.Answer.Text != tt.text {
				t.Fatalf("got %+v content %s", l, l.Answer.Content)
			}
		})
	}
}

func choice(multiple, custom bool, ids ...string) Question {
	q := Question{Kind: KindChoice, Multiple: multiple, Custom: custom}
	for _, id := range ids {
		q.Options = append(q.Options, Option{ID: id, Label: strings.ToUpper(id)})
	}
	return q
}

func TestCheck(t *testing.T) {
	text := Question{Kind: KindText}
	number := Question{Kind: KindText, Schema: json.RawMessage(`{"type":"integer","minimum":1}`)}
	confirm := Question{Kind: KindConfirm}
	form := Question{Kind: KindForm, Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)}
	tests := []struct {
		name    string
		q       Question
		a       Answer
		content string
		text    string
		err     string
	}{
		{"choice by id", choice(false, false, "a", "b"), Answer{Action: Accept, Content: json.RawMessage(`"b"`)}, `"b"`, "", ""},
		{"choice by index", choice(false, false, "a", "b"), Answer{Action: Accept, Content: json.RawMessage(`1`)}, `"b"`, "", ""},
		{"choice index out of range", choice(false, false, "a", "b"), Answer{Action: Accept, Content: json.RawMessage(`2`)}, "", "", "out of range 0..1"},
		{"choice typo", choice(false, false, "a", "b"), Answer{Action: Accept, Content: json.RawMessage(`"c"`)}, "", "", `unknown option "c"`},
		{"choice label is not id", choice(false, false, "a", "b"), Answer{Action: Accept, Content: json.RawMessage(`"A"`)}, "", "", `unknown option "A"`},
		{"numeric ids take no index", choice(false, false, "1", "2"), Answer{Action: Accept, Content: json.RawMessage(`1`)}, "", "", "option ids of this question are numbers"},
		{"numeric id as string", choice(false, false, "1", "2"), Answer{Action: Accept, Content: json.RawMessage(`"1"`)}, `"1"`, "", ""},
		{"multiple", choice(true, false, "a", "b", "c"), Answer{Action: Accept, Content: json.RawMessage(`["c",0]`)}, `["c","a"]`, "", ""},
		{"multiple needs array", choice(true, false, "a", "b"), Answer{Action: Accept, Content: json.RawMessage(`"a"`)}, "", "", "expected an array"},
		{"multiple twice", choice(true, false, "a", "b"), Answer{Action: Accept, Content: json.RawMessage(`["a","a"]`)}, "", "", "chosen twice"},
		{"free text allowed", choice(false, true, "a"), Answer{Action: Accept, Text: "other"}, "", "other", ""},
		{"free text refused", choice(false, false, "a"), Answer{Action: Accept, Text: "other"}, "", "", "takes no free text"},
		{"text question free text", text, Answer{Action: Accept, Text: "hi"}, `"hi"`, "", ""},
		{"text question string", text, Answer{Action: Accept, Content: json.RawMessage(`"hi"`)}, `"hi"`, "", ""},
		{"text question number", text, Answer{Action: Accept, Content: json.RawMessage(`3`)}, "", "", "expected a string"},
		{"number ok", number, Answer{Action: Accept, Content: json.RawMessage(`3`)}, `3`, "", ""},
		{"number below minimum", number, Answer{Action: Accept, Content: json.RawMessage(`0`)}, "", "", "does not fit the question's schema"},
		{"confirm", confirm, Answer{Action: Accept, Content: json.RawMessage(`false`)}, `false`, "", ""},
		{"text question null", text, Answer{Action: Accept, Content: json.RawMessage(`null`)}, "", "", "expected a string, got null"},
		{"confirm null", confirm, Answer{Action: Accept, Content: json.RawMessage(`null`)}, "", "", "expected true or false, got null"},
		{"confirm not bool", confirm, Answer{Action: Accept, Content: json.RawMessage(`"yes"`)}, "", "", "expected true or false"},
		{"form", form, Answer{Action: Accept, Content: json.RawMessage(`{"a":"x"}`)}, `{"a":"x"}`, "", ""},
		{"form missing field", form, Answer{Action: Accept, Content: json.RawMessage(`{}`)}, "", "", "missing property 'a'"},
		{"decline drops content", text, Answer{Action: Decline, Content: json.RawMessage(`"x"`)}, "", "", ""},
		{"no content", text, Answer{Action: Accept}, "", "", "no content"},
		{"both", choice(false, true, "a"), Answer{Action: Accept, Content: json.RawMessage(`"a"`), Text: "x"}, "", "", "not both"},
		{"bad action", text, Answer{Action: "yes"}, "", "", `unknown action "yes"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Check(tt.q, tt.a)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Content) != tt.content || got.Text != tt.text {
				t.Fatalf("got content %s text %q", got.Content, got.Text)
			}
		})
	}
}

func TestCheckHidesSecrets(t *testing.T) {
	pattern := Question{Kind: KindText, Secret: true, Schema: json.RawMessage(`{"type":"string","pattern":"^tok_"}`)}
	integer := Question{Kind: KindText, Secret: true, Schema: json.RawMessage(`{"type":"integer","maximum":10}`)}
	plain := Question{Kind: KindText, Secret: true}
	form := Question{Kind: KindForm, Schema: json.RawMessage(`{"type":"object","properties":{"pw":{"type":"string","pattern":"^tok_"}}}`),
		Fields: []Field{{Name: "pw", Question: Question{Kind: KindText, Secret: true}}}}
	tests := []struct {
		name, secret string
		q            Question
		a            Answer
		want         string
	}{
		{"pattern", "hunter2secret", pattern, Answer{Action: Accept, Content: json.RawMessage(`"hunter2secret"`)}, "'***' does not match pattern"},
		{"text field", "hunter2secret", pattern, Answer{Action: Accept, Text: "hunter2secret"}, "does not match pattern"},
		{"not a string", "98765", plain, Answer{Action: Accept, Content: json.RawMessage(`98765`)}, "expected a string"},
		{"number", "98,765", integer, Answer{Action: Accept, Content: json.RawMessage(`98765`)}, "does not fit the question"},
		{"quote in the value", "it's\tsecret", pattern, Answer{Action: Accept, Content: json.RawMessage(`"it's\tsecret"`)}, "'***' does not match pattern"},
		{"form field", "hunter2secret", form, Answer{Action: Accept, Content: json.RawMessage(`{"pw":"hunter2secret"}`)}, "does not match pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(tt.q, tt.a)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), tt.secret) {
				t.Fatalf("the reason shows the secret: %v", err)
			}
		})
	}
}

func TestFromSchema(t *testing.T) {
	tests := []struct {
		schema   string
		kind     Kind
		options  string
		multiple bool
		secret   bool
		fields   string
		err      string
	}{
		{schema: ``, kind: KindText},
		{schema: `{"type":"string"}`, kind: KindText},
		{schema: `{"type":"string","enum":["a","b"]}`, kind: KindChoice, options: "a,b"},
		{schema: `{"oneOf":[{"const":"x","title":"Ex"},{"const":"y"}]}`, kind: KindChoice, options: "x=Ex,y=y"},
		{schema: `{"type":"array","items":{"enum":["a","b"]}}`, kind: KindChoice, options: "a,b", multiple: true},
		{schema: `{"type":"string","enum":["p1","p2"],"enumNames":["Cats","Dogs"]}`, kind: KindChoice, options: "p1=Cats,p2=Dogs"},
		{schema: `{"type":"string","enum":["p1","p2"],"enumNames":["Cats"]}`, kind: KindChoice, options: "p1,p2"},
		{schema: `{"type":"array","items":{"anyOf":[{"const":"f1","title":"Tuna"},{"const":"f2","title":"Salmon"}]}}`, kind: KindChoice, options: "f1=Tuna,f2=Salmon", multiple: true},
		{schema: `{"type":"array","items":{"oneOf":[{"const":"f1","title":"Tuna"},{"const":"f2"}]}}`, kind: KindChoice, options: "f1=Tuna,f2", multiple: true},
		{schema: `{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"number"}]}}`, kind: KindText},
		{schema: `{"type":"boolean"}`, kind: KindConfirm},
		{schema: `{"type":"integer","minimum":1}`, kind: KindText},
		{schema: `{"type":"string","format":"password"}`, kind: KindText, secret: true},
		{schema: `{"type":"string","writeOnly":true}`, kind: KindText, secret: true},
		{schema: `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"boolean"}}}`, kind: KindForm, fields: "z:text,a:confirm"},
		{schema: `{"anyOf":[{"type":"string"},{"type":"number"}]}`, kind: KindText},
		{schema: `{"type":"nope"}`, err: "does not compile"},
		{schema: `{"type":"string","enum":["a"],"default":"b"}`, err: "default does not satisfy"},
		{schema: `[1]`, err: "does not compile"},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			q, err := FromSchema(json.RawMessage(tt.schema))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var opts []string
			for _, o := range q.Options {
				if o.ID == o.Label {
					opts = append(opts, o.ID)
				} else {
					opts = append(opts, o.ID+"="+o.Label)
				}
			}
			if tt.options == "x=Ex,y=y" {
				opts[1] = "y=y"
			}
			var fields []string
			for _, f := range q.Fields {
				fields = append(fields, f.Name+":"+string(f.Question.Kind))
			}
			if q.Kind != tt.kind || strings.Join(opts, ",") != tt.options || q.Multiple != tt.multiple || q.Secret != tt.secret || strings.Join(fields, ",") != tt.fields {
				t.Fatalf("got %+v", q)
			}
		})
	}
}

// fakeFrontEnd answers from a queue and fails the test on an unexpected or
// left-over question.
type fakeFrontEnd struct {
	t       *testing.T
	answers []Answer
	errs    []error
}

func (f *fakeFrontEnd) Ask(ctx context.Context, q Question) (Answer, error) {
	if len(f.answers) == 0 {
		f.t.Fatalf("unexpected question %q", q.Message)
	}
	a, err := f.answers[0], f.errs[0]
	f.answers, f.errs = f.answers[1:], f.errs[1:]
	return a, err
}

func (f *fakeFrontEnd) verify() {
	if len(f.answers) > 0 {
		f.t.Errorf("%d answers not consumed", len(f.answers))
	}
}

func TestAskerPolicy(t *testing.T) {
	eof := &UnansweredError{Source: SourceEOF, Reason: "end of input"}
	withDefault := Question{Kind: KindText, Message: "name?", Default: json.RawMessage(`"x"`)}
	confirm := Question{Kind: KindConfirm, Message: "ok?", Default: json.RawMessage(`true`)}
	approval := Question{Kind: KindChoice, Message: "run?", Options: []Option{{ID: "once"}, {ID: "no"}}, Default: json.RawMessage(`"no"`), Consent: ConsentApproval}
	choice := Question{Kind: KindChoice, Message: "allow?", Options: []Option{{ID: "Yes"}, {ID: "No"}}, Default: json.RawMessage(`"No"`), Consent: ConsentChoice}
	followUp := Question{Kind: KindText, Message: "what should change?", Consent: ConsentFollowUp}
	form, err := FromSchema(json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"},"deploy":{"type":"boolean"}},"default":{"env":"prod","deploy":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	textForm, err := FromSchema(json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"default":{"env":"prod"}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		policy Unanswered
		q      Question
		action Action
		source Source
		stop   bool
	}{
		{"stop", UnansweredStop, withDefault, "", "", true},
		{"cancel", UnansweredCancel, withDefault, Cancel, SourceEOF, false},
		{"default", UnansweredDefault, withDefault, Accept, SourceDefault, false},
		{"confirm never defaulted", UnansweredDefault, confirm, Cancel, SourceEOF, false},
		// DESIGN §4: an approval with nobody to ask stops the run under
		// stop (resumable); under cancel it is refused.
		{"approval stops the run", UnansweredStop, approval, "", "", true},
		{"approval cancelled", UnansweredCancel, approval, Cancel, SourceEOF, false},
		{"remote choice stops the run", UnansweredStop, choice, "", "", true},
		{"remote choice never defaulted", UnansweredDefault, choice, Cancel, SourceEOF, false},
		{"follow-up never stops", UnansweredStop, followUp, Cancel, SourceEOF, false},
		{"approval never defaulted", UnansweredDefault, approval, Cancel, SourceEOF, false},
		{"form with a yes/no field never defaulted", UnansweredDefault, form, Cancel, SourceEOF, false},
		{"form of text fields defaulted", UnansweredDefault, textForm, Accept, SourceDefault, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := &fakeFrontEnd{t: t, answers: []Answer{{}}, errs: []error{eof}}
			a := &Asker{FrontEnd: fe, Unanswered: tt.policy}
			ans, err := a.Ask(context.Background(), tt.q)
			fe.verify()
			var stop *StopError
			if tt.stop {
				if !errors.As(err, &stop) || stop.Question.ID != "p1" {
					t.Fatalf("err = %v, want a StopError for p1", err)
				}
				return
			}
			if err != nil || ans.Action != tt.action || ans.Source != tt.source {
				t.Fatalf("got %+v, %v", ans, err)
			}
			if !ans.Unanswered() {
				t.Error("Unanswered() is false")
			}
		})
	}
}

func TestAskerTimeout(t *testing.T) {
	j := NewJSONL(blockingReader{})
	a := &Asker{FrontEnd: j, Timeout: 20 * time.Millisecond, Unanswered: UnansweredCancel}
	ans, err := a.Ask(context.Background(), Question{Kind: KindText, Message: "x"})
	if err != nil || ans.Action != Cancel || ans.Source != SourceTimeout {
		t.Fatalf("got %+v, %v", ans, err)
	}
}

type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

func TestAskerSecrets(t *testing.T) {
	fe := &fakeFrontEnd{t: t, answers: []Answer{{Action: Accept, Content: json.RawMessage(`"hunter2"`)}}, errs: []error{nil}}
	s := &Secrets{}
	a := &Asker{FrontEnd: fe, Secrets: s}
	ans, err := a.Ask(context.Background(), Question{Kind: KindText, Secret: true})
	if err != nil || string(ans.Content) != `"$HITL_SECRET_1"` {
		t.Fatalf("got %s, %v", ans.Content, err)
	}
	if env := s.Env(); len(env) != 1 || env[0] != "HITL_SECRET_1=hunter2" {
		t.Fatalf("env %v", env)
	}
	if got := s.Expand(`{"t":"${HITL_SECRET_1}","u":"$HITL_SECRET_1","v":"$HITL_SECRET_9"}`); got != `{"t":"hunter2","u":"hunter2","v":"$HITL_SECRET_9"}` {
		t.Fatalf("Expand: %s", got)
	}
	if got := s.Mask("token hunter2 ok"); got != "token *** ok" {
		t.Fatalf("Mask: %s", got)
	}
}

func TestAskerSecretNotString(t *testing.T) {
	form := Question{Kind: KindForm, Fields: []Field{{Name: "pin", Question: Question{Kind: KindText, Secret: true}}}}
	tests := []struct {
		name    string
		q       Question
		content string
		want    string
	}{
		{"integer", Question{Kind: KindText, Secret: true}, `987654`, `"$HITL_SECRET_1"`},
		{"form field integer", form, `{"pin":987654}`, `{"pin":"$HITL_SECRET_1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := &fakeFrontEnd{t: t, answers: []Answer{{Action: Accept, Content: json.RawMessage(tt.content)}}, errs: []error{nil}}
			s := &Secrets{}
			a := &Asker{FrontEnd: fe, Secrets: s}
			ans, err := a.Ask(context.Background(), tt.q)
			if err != nil || string(ans.Content) != tt.want {
				t.Fatalf("got %s, %v; want %s", ans.Content, err, tt.want)
			}
			if env := s.Env(); len(env) != 1 || env[0] != "HITL_SECRET_1=987654" {
				t.Fatalf("env %v", env)
			}
		})
	}
}

func TestJSONLReadsLines(t *testing.T) {
	long := `"` + strings.Repeat("a", MaxLine+10) + `"`
	j := NewJSONL(strings.NewReader("\n\"a\"\n" + long + "\n\"b\""))
	q := Question{ID: "p1", Kind: KindText}
	if a, err := j.Ask(context.Background(), q); err != nil || string(a.Content) != `"a"` {
		t.Fatalf("first: %+v %v", a, err)
	}
	_, err := j.Ask(context.Background(), q)
	var bad *BadAnswerError
	if !errors.As(err, &bad) || bad.Line != 3 || !strings.Contains(bad.Reason, "longer than") {
		t.Fatalf("long line: %v", err)
	}
	if a, err := j.Ask(context.Background(), q); err != nil || string(a.Content) != `"b"` {
		t.Fatalf("after long line: %+v %v", a, err)
	}
	_, err = j.Ask(context.Background(), q)
	var un *UnansweredError
	if !errors.As(err, &un) || un.Source != SourceEOF {
		t.Fatalf("eof: %v", err)
	}
}

var _ io.Reader = blockingReader{}

func TestJSONLNotices(t *testing.T) {
	var notes strings.Builder
	j := NewJSONL(blockingReader{})
	j.Notice, j.WaitNotice = &notes, 10*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
	defer cancel()
	_, err := j.Ask(ctx, Question{ID: "p4", Kind: KindText, Message: "Which\nbranch?"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	got := notes.String()
	if strings.Count(got, "reading answers from stdin (JSONL)") != 1 {
		t.Errorf("where answers are read from should be said once:\n%s", got)
	}
	if !strings.Contains(got, "still waiting on stdin for an answer to p4: Which branch?") {
		t.Errorf("no waiting reminder:\n%s", got)
	}
}

func TestSecretsReserve(t *testing.T) {
	s := &Secrets{}
	s.Reserve(MaxPlaceholder(`{"content":"$HITL_SECRET_2"} and ${HITL_SECRET_1}`))
	if got := s.Add("new-value"); got != "$HITL_SECRET_3" {
		t.Fatalf("Add after Reserve(2) = %s, want $HITL_SECRET_3", got)
	}
	tests := []struct{ in, want string }{
		{"$HITL_SECRET_1", "$HITL_SECRET_1"}, // lost: left as is
		{"$HITL_SECRET_3", "new-value"},
		{"$HITL_SECRET_99999999999999999999", "$HITL_SECRET_99999999999999999999"},
	}
	for _, tt := range tests {
		if got := s.Expand(tt.in); got != tt.want {
			t.Errorf("Expand(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if env := s.Env(); len(env) != 1 || env[0] != "HITL_SECRET_3=new-value" {
		t.Errorf("Env() = %q, want [HITL_SECRET_3=new-value]", env)
	}
}

func TestShortLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Which\nbranch?", "Which branch?"},
		{"Run \x1b[31mrm\x1b[0m?", `Run \x1b[31mrm\x1b[0m?`},
		{"ok \u202eevil", `ok \u202eevil`},
		{strings.Repeat("é", 81), strings.Repeat("é", 80) + "…"},
	}
	for _, tt := range tests {
		got := shortLine(tt.in)
		if got != tt.want {
			t.Errorf("shortLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("shortLine(%q) is not valid UTF-8", tt.in)
		}
	}
}

func TestSecretsSet(t *testing.T) {
	s := &Secrets{}
	s.Reserve(2)
	if p := s.Set(1, "old-one"); p != "$HITL_SECRET_1" {
		t.Fatalf("Set = %s", p)
	}
	if p := s.Add("new-one"); p != "$HITL_SECRET_3" {
		t.Fatalf("Add after Reserve(2) = %s, want $HITL_SECRET_3", p)
	}
	if env := strings.Join(s.Env(), " "); env != "HITL_SECRET_1=old-one HITL_SECRET_3=new-one" {
		t.Fatalf("Env = %s", env)
	}
	if got := s.Expand("$HITL_SECRET_1 $HITL_SECRET_2 $HITL_SECRET_3"); got != "old-one $HITL_SECRET_2 new-one" {
		t.Fatalf("Expand = %s", got)
	}
	for text, want := range map[string]int{"$HITL_SECRET_12": 12, "${HITL_SECRET_3}": 3, "x $HITL_SECRET_1": 0, "": 0} {
		if got := PlaceholderNumber(text); got != want {
			t.Errorf("PlaceholderNumber(%q) = %d, want %d", text, got, want)
		}
	}
}

func TestSecretsReserveIgnoresHugeNumbers(t *testing.T) {
	s := &Secrets{}
	s.Reserve(3)
	s.Reserve(9223372036854775807) // printed by a command, not given out by hitl
	if p := s.Add("v"); p != "$HITL_SECRET_4" {
		t.Fatalf("Add = %s, want $HITL_SECRET_4", p)
	}
}

// A question asked under an id of the caller's (a resumed MCP call asking
// its kept questions again) is never followed by another under that id.
func TestAskerIDsNeverReused(t *testing.T) {
	tests := []struct {
		name  string
		given []string // ids of the questions asked, "" for the next one
		want  []string // the ids they had
	}{
		{"numbered in order", []string{"", "", ""}, []string{"p1", "p2", "p3"}},
		{"an id ahead moves the counter", []string{"", "p5", ""}, []string{"p1", "p5", "p6"}},
		{"an id behind does not", []string{"", "", "p1", ""}, []string{"p1", "p2", "p1", "p3"}},
		{"a secret's id is not counted", []string{"s7", ""}, []string{"s7", "p1"}},
		{"NewID takes an id", []string{"new", ""}, []string{"p1", "p2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &idObserver{}
			a := &Asker{Unanswered: UnansweredCancel, Observer: obs}
			for _, id := range tt.given {
				if id == "new" {
					id = a.NewID()
				}
				if _, err := a.Ask(context.Background(), Question{Kind: KindText, ID: id}); err != nil {
					t.Fatal(err)
				}
			}
			if strings.Join(obs.ids, ",") != strings.Join(tt.want, ",") {
				t.Errorf("ids %v, want %v", obs.ids, tt.want)
			}
		})
	}
}

type idObserver struct{ ids []string }

func (o *idObserver) Requested(q Question)      { o.ids = append(o.ids, q.ID) }
func (o *idObserver) Answered(Question, Answer) {}

// endless is a stream of bytes with no newline that never ends; it counts
// what was read from it.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	if e.n > 8*MaxLine {
		return 0, io.EOF // the reader went far past the bound: fail below
	}
	for i := range p {
		p[i] = 'a'
	}
	e.n += len(p)
	return len(p), nil
}

func TestJSONLEndlessLineEndsAtTheBound(t *testing.T) {
	src := &endless{}
	j := NewJSONL(src)
	_, err := j.Ask(context.Background(), Question{ID: "p1", Kind: KindText})
	var bad *BadAnswerError
	if !errors.As(err, &bad) || bad.Line != 1 || !strings.Contains(bad.Reason, "longer than") {
		t.Fatalf("endless line: %v", err)
	}
	if src.n > 2*MaxLine {
		t.Fatalf("read %d bytes of a line bounded at %d", src.n, MaxLine)
	}
}
