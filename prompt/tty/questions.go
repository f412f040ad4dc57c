package tty

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/AlecAivazis/survey/v2"
	"github.com/AlecAivazis/survey/v2/core"
	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/hitl-dev/hitl/prompt"
)

// customLabel is the extra last option of a choice that allows free text.
const customLabel = "Type your own answer…"

// errSkipped is an optional form field left empty.
var errSkipped = errors.New("skipped")

// question asks a question that is not a form. What it preselects is
// decided by preselect (and for confirmations, by confirm): on a consent question the model
// may have written the default, and a person pressing Enter out of habit
// must not approve anything (DESIGN §1, §4 "Consent questions").
func (s *session) question(q prompt.Question, tags []string) (prompt.Answer, error) {
	switch q.Kind {
	case prompt.KindChoice:
		if q.Multiple {
			return s.multiChoice(q, tags)
		}
		return s.choice(q, tags)
	case prompt.KindConfirm:
		return s.confirm(q, tags)
	}
	return s.text(q, tags, false)
}

// labels are the options as drawn: escaped, plus the free-text option.
func labels(q prompt.Question) ([]string, func(string, int) string) {
	out := make([]string, 0, len(q.Options)+1)
	for _, o := range q.Options {
		out = append(out, termtext.LineTerminal(o.Label))
	}
	if q.Custom {
		out = append(out, customLabel)
	}
	describe := func(_ string, i int) string {
		if i < len(q.Options) {
			return termtext.LineTerminal(q.Options[i].Description)
		}
		return ""
	}
	return out, describe
}

func (s *session) choice(q prompt.Question, tags []string) (prompt.Answer, error) {
	if remoteChoice(q) {
		tags = escSendsDefault(q, tags)
	}
	opts, describe := labels(q)
	reserve := min(len(opts), pageSize) + 2
	if no, err := s.viewFirst(q, reserve, tags); err != nil || no != nil {
		if err != nil {
			return prompt.Answer{}, err
		}
		return check(q, *no)
	}
	msg := s.message(q, reserve, tags...)
	sel := &survey.Select{Message: msg, Options: opts, Description: describe}
	if i, ok := preselect(q); ok {
		sel.Default = i
	}
	v, err := s.run(sel, nil, summaryMessage(q))
	if err != nil {
		return prompt.Answer{}, err
	}
	picked, _ := v.(core.OptionAnswer)
	if picked.Index >= len(q.Options) {
		return s.freeText(q, nil)
	}
	content, _ := json.Marshal(q.Options[picked.Index].ID)
	return check(q, prompt.Answer{Action: prompt.Accept, Content: content})
}

func (s *session) multiChoice(q prompt.Question, tags []string) (prompt.Answer, error) {
	opts, describe := labels(q)
	msg := s.message(q, min(len(opts), pageSize)+2, tags...)
	ms := &survey.MultiSelect{Message: msg, Options: opts, Description: describe}
	if q.PreselectDefault() {
		var ids []json.RawMessage
		if json.Unmarshal(q.Default, &ids) == nil {
			var checked []int
			for _, id := range ids {
				if i, ok := defaultIndex(q, id); ok {
					checked = append(checked, i)
				}
			}
			ms.Default = checked
		}
	}
	answer := func(v any) (prompt.Answer, bool) {
		picked, _ := v.([]core.OptionAnswer)
		ids := []string{}
		custom := false
		for _, p := range picked {
			if p.Index >= len(q.Options) {
				custom = true
				continue
			}
			ids = append(ids, q.Options[p.Index].ID)
		}
		content, _ := json.Marshal(ids)
		return prompt.Answer{Action: prompt.Accept, Content: content}, custom
	}
	validate := func(v any) error {
		a, custom := answer(v)
		if custom {
			return nil
		}
		_, err := check(q, a)
		return err
	}
	v, err := s.run(ms, validate, summaryMessage(q))
	if err != nil {
		return prompt.Answer{}, err
	}
	a, custom := answer(v)
	if !custom {
		return check(q, a)
	}
	// Free text besides options: the chosen labels and the typed text,
	// joined as a multiple answer is (", ").
	var chosen []string
	for _, p := range v.([]core.OptionAnswer) {
		if p.Index < len(q.Options) {
			chosen = append(chosen, q.Options[p.Index].Label)
		}
	}
	return s.freeText(q, chosen)
}

// freeText asks for the person's own answer to a choice that allows it.
func (s *session) freeText(q prompt.Question, chosen []string) (prompt.Answer, error) {
	answer := func(v any) prompt.Answer {
		typed, _ := v.(string)
		return prompt.Answer{Action: prompt.Accept, Text: strings.Join(append(chosen, typed), ", ")}
	}
	validate := func(v any) error {
		if typed, _ := v.(string); strings.TrimSpace(typed) == "" {
			return errors.New("type an answer, or press Esc to dismiss the question")
		}
		_, err := check(q, answer(v))
		return err
	}
	in := &survey.Input{Message: "Your answer:"}
	v, err := s.run(in, validate, in.Message)
	if err != nil {
		return prompt.Answer{}, err
	}
	return check(q, answer(v))
}

func (s *session) confirm(q prompt.Question, tags []string) (prompt.Answer, error) {
	if no, err := s.viewFirst(q, 2, tags); err != nil || no != nil {
		if err != nil {
			return prompt.Answer{}, err
		}
		return check(q, *no)
	}
	msg := s.message(q, 2, tags...)
	c := &yesNoPrompt{survey.Confirm{Message: msg}}
	if q.PreselectDefault() {
		// A consent confirmation starts on no, the refusal, unless its
		// default is hitl's or the invoking person's (hitl ask --default).
		_ = json.Unmarshal(q.Default, &c.Default)
	}
	answer := func(v any) (prompt.Answer, error) {
		b, err := c.parse(v)
		if err != nil {
			return prompt.Answer{}, err
		}
		content, _ := json.Marshal(b)
		return check(q, prompt.Answer{Action: prompt.Accept, Content: content})
	}
	validate := func(v any) error {
		_, err := answer(v)
		return err
	}
	v, err := s.run(c, validate, summaryMessage(q))
	if err != nil {
		return prompt.Answer{}, err
	}
	return answer(v)
}

// text asks for typed text: a string, a number, or JSON, as the schema
// wants; a secret is never echoed. An optional form field left empty
// returns errSkipped.
func (s *session) text(q prompt.Question, tags []string, optional bool) (prompt.Answer, error) {
	mode := valueModeOf(q.Schema)
	if mode == jsonValue {
		tags = append(tags, "(JSON)")
	}
	if optional {
		tags = append(tags, "(optional)")
	}
	msg := s.message(q, 2, tags...)
	def := ""
	if !isConsent(q) && !q.Secret && len(q.Default) > 0 {
		def = mode.defaultText(q.Default)
	}
	shownDef := termtext.LineTerminal(def)
	typedOf := func(v any) string {
		typed, _ := v.(string)
		if typed == shownDef && shownDef != def {
			typed = def // survey returns its (escaped) default on Enter
		}
		return typed
	}
	answer := func(v any) (prompt.Answer, error) {
		typed := typedOf(v)
		if optional && typed == "" {
			return prompt.Answer{}, errSkipped
		}
		content, err := mode.parse(typed)
		if err != nil {
			return prompt.Answer{}, err
		}
		return check(q, prompt.Answer{Action: prompt.Accept, Content: content})
	}
	validate := func(v any) error {
		if _, err := answer(v); err != nil && !errors.Is(err, errSkipped) {
			return err
		}
		return nil
	}
	var p survey.Prompt = &survey.Input{Message: msg, Default: shownDef}
	if q.Secret {
		p = &secretPrompt{Message: msg}
	}
	v, err := s.run(p, validate, summaryMessage(q))
	if err != nil {
		return prompt.Answer{}, err
	}
	return answer(v)
}

// check runs prompt.Check and escapes its reason for drawing: it may quote
// model text (option ids, schema values).
func check(q prompt.Question, a prompt.Answer) (prompt.Answer, error) {
	out, err := prompt.Check(q, a)
	if err != nil {
		return out, errors.New(termtext.LineTerminal(err.Error()))
	}
	return out, nil
}

// defaultIndex finds the option a default names (by id).
func defaultIndex(q prompt.Question, def json.RawMessage) (int, bool) {
	if len(def) == 0 {
		return 0, false
	}
	var id string
	if json.Unmarshal(def, &id) != nil {
		return 0, false
	}
	for i, o := range q.Options {
		if o.ID == id {
			return i, true
		}
	}
	return 0, false
}

// form asks the fields of a form one after another and assembles the
// object; an object the schema refuses is asked again, from the first field.
func (s *session) form(q prompt.Question) (prompt.Answer, error) {
	var defaults map[string]json.RawMessage
	_ = json.Unmarshal(q.Default, &defaults)
	for {
		s.heading(s.message(q, 4, dismissTag))
		var buf bytes.Buffer
		buf.WriteByte('{')
		for _, f := range q.Fields {
			fq := f.Question
			if len(fq.Default) == 0 {
				fq.Default = defaults[f.Name]
			}
			value, err := s.field(q, f, fq)
			if errors.Is(err, errSkipped) {
				continue
			}
			if err != nil {
				return prompt.Answer{}, err
			}
			if buf.Len() > 1 {
				buf.WriteByte(',')
			}
			name, _ := json.Marshal(f.Name)
			buf.Write(name)
			buf.WriteByte(':')
			buf.Write(value)
		}
		buf.WriteByte('}')
		ans, err := check(q, prompt.Answer{Action: prompt.Accept, Content: buf.Bytes()})
		if err == nil {
			return ans, nil
		}
		s.invalid(err)
	}
}

// field asks one field of form and returns its JSON value.
func (s *session) field(form prompt.Question, f prompt.Field, fq prompt.Question) (json.RawMessage, error) {
	// Each field is what it is: the yes/no field of a form is consent (it
	// starts on No, takes keys only after a moment); its other fields show
	// their defaults, which Enter takes, as a person sees them.
	if isConsent(fq) {
		s.in.hold = consentHold
	}
	for {
		var (
			ans prompt.Answer
			err error
		)
		if fq.Kind == prompt.KindText {
			ans, err = s.text(fq, nil, !f.Required)
		} else {
			ans, err = s.question(fq, nil)
		}
		if err != nil {
			return nil, err
		}
		if ans.Text != "" {
			return json.Marshal(ans.Text)
		}
		// The field's own schema (minItems of a multi-select, say) is
		// checked here: a wrong field is asked again, not the whole form.
		if _, err := prompt.Check(fq, ans); err != nil {
			s.invalid(err)
			continue
		}
		return ans.Content, nil
	}
}

// heading draws a line in survey's style that is not a prompt (a form's
// title and question).
func (s *session) heading(msg string) {
	out, _, err := core.RunTemplate(`{{color "green+hb"}}? {{color "reset"}}{{color "default+hb"}}{{.}}{{color "reset"}}`+"\n", msg)
	if err != nil {
		out = "? " + msg + "\n"
	}
	fmt.Fprint(s.out, out)
}

// invalid draws why an answer was refused, as survey does.
func (s *session) invalid(err error) {
	out, _, terr := core.RunTemplate(`{{color "red"}}X Sorry, your reply was invalid: {{.}}{{color "reset"}}`+"\n", err.Error())
	if terr != nil {
		out = "X Sorry, your reply was invalid: " + err.Error() + "\n"
	}
	fmt.Fprint(s.out, out)
}
