package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/hitl-dev/hitl/prompt/schema"
)

// Check validates an answer against its question and returns it in canonical
// form: a choice's content is the option id (or an array of ids when
// multiple), a text question's free text becomes its content. The error
// says what was expected; front ends report it (JSONL: exit 2 naming the
// line; TTY: asked again).
func Check(q Question, a Answer) (Answer, error) {
	out, err := check(q, a)
	if err != nil {
		err = hideSecretValues(q, a, err)
	}
	return out, err
}

func check(q Question, a Answer) (Answer, error) {
	switch a.Action {
	case Accept:
	case Decline, Cancel:
		return Answer{Action: a.Action, Source: a.Source}, nil
	case "":
		return a, fmt.Errorf("no action; expected accept, decline or cancel")
	default:
		return a, fmt.Errorf("unknown action %q; expected accept, decline or cancel", a.Action)
	}
	if a.Text != "" && len(a.Content) > 0 {
		return a, fmt.Errorf("give content or text, not both")
	}
	if a.Text != "" {
		switch {
		case q.Kind == KindText:
			content, _ := json.Marshal(a.Text)
			a.Content, a.Text = content, ""
		case q.Custom:
			return a, nil
		default:
			return a, fmt.Errorf("this question takes no free text; %s", expectation(q))
		}
	}
	if len(bytes.TrimSpace(a.Content)) == 0 {
		if q.AcceptAlone && q.Kind == KindConfirm {
			a.Content = json.RawMessage("true")
			return a, nil
		}
		return a, fmt.Errorf("no content; %s", expectation(q))
	}
	var err error
	switch q.Kind {
	case KindChoice:
		a.Content, err = checkChoice(q, a.Content)
	case KindConfirm:
		// null unmarshals into a bool or string without error: refuse it.
		var b bool
		if isNull(a.Content) || json.Unmarshal(a.Content, &b) != nil {
			err = fmt.Errorf("expected true or false, got %s", preview(a.Content))
		}
	case KindText:
		if len(q.Schema) == 0 {
			var s string
			if isNull(a.Content) || json.Unmarshal(a.Content, &s) != nil {
				err = fmt.Errorf("expected a string, got %s", preview(a.Content))
			}
		}
	}
	if err != nil {
		return a, err
	}
	if len(q.Schema) > 0 && (q.Kind != KindChoice || q.Multiple) { // a multi-select: minItems, maxItems
		if err := validate(q.Schema, a.Content); err != nil {
			return a, err
		}
	}
	return a, nil
}

func validate(raw, content json.RawMessage) error {
	s, err := schema.Compile(raw)
	if err != nil {
		return fmt.Errorf("the question's schema cannot be used: %v", err)
	}
	if err := s.Validate(content); err != nil {
		return fmt.Errorf("the content does not fit the question's schema: %v", err)
	}
	return nil
}

func checkChoice(q Question, content json.RawMessage) (json.RawMessage, error) {
	if q.Multiple {
		var items []json.RawMessage
		if err := json.Unmarshal(content, &items); err != nil {
			return nil, fmt.Errorf("this question takes several options: expected an array of option ids, got %s", preview(content))
		}
		ids := make([]string, 0, len(items))
		seen := map[string]bool{}
		for _, item := range items {
			id, err := optionID(q, item)
			if err != nil {
				return nil, err
			}
			if seen[id] {
				return nil, fmt.Errorf("option %q is chosen twice", id)
			}
			seen[id] = true
			ids = append(ids, id)
		}
		return json.Marshal(ids)
	}
	id, err := optionID(q, content)
	if err != nil {
		return nil, err
	}
	return json.Marshal(id)
}

// optionID resolves an option named by id (matched exactly) or by 0-based
// index (unless some option id is numeric).
func optionID(q Question, v json.RawMessage) (string, error) {
	var id string
	if json.Unmarshal(v, &id) == nil {
		for _, o := range q.Options {
			if o.ID == id {
				return id, nil
			}
		}
		return "", fmt.Errorf("unknown option %q; %s", id, expectation(q))
	}
	var n float64
	if json.Unmarshal(v, &n) == nil {
		if q.Consent.IsConsent() {
			// An index is too easy to get wrong (or to write for another
			// question) to grant anything: name the option (DESIGN §4).
			return "", fmt.Errorf("this question asks for consent: name the option, an index is not taken; %s", expectation(q))
		}
		if numericIDs(q) {
			return "", fmt.Errorf("option ids of this question are numbers: give the id as a string; %s", expectation(q))
		}
		i := int(n)
		if float64(i) != n || i < 0 || i >= len(q.Options) {
			return "", fmt.Errorf("option index %s is out of range 0..%d", preview(v), len(q.Options)-1)
		}
		return q.Options[i].ID, nil
	}
	return "", fmt.Errorf("expected an option id or index, got %s; %s", preview(v), expectation(q))
}

func numericIDs(q Question) bool {
	for _, o := range q.Options {
		if _, err := strconv.ParseFloat(o.ID, 64); err == nil {
			return true
		}
	}
	return false
}

// expectation says what an accepted answer to q looks like.
func expectation(q Question) string {
	switch q.Kind {
	case KindChoice:
		ids := make([]string, len(q.Options))
		for i, o := range q.Options {
			ids[i] = strconv.Quote(o.ID)
		}
		s := "expected one of the option ids " + strings.Join(ids, ", ")
		if q.Multiple {
			s = "expected an array of the option ids " + strings.Join(ids, ", ")
		}
		if q.Custom {
			s += `, or free text as {"text": "..."}`
		}
		return s
	case KindConfirm:
		return "expected true or false"
	case KindForm:
		return "expected an object with the form's fields"
	}
	return "expected a string"
}

// hideSecretValues keeps a rejected secret answer out of the reason, which
// goes to stderr, the error event and the terminal: quoted occurrences of the
// value become ***; when the value is not a string (the validator formats
// numbers its own way) or still shows, the reason is replaced.
func hideSecretValues(q Question, a Answer, err error) error {
	var values []json.RawMessage
	if q.Secret {
		values = append(values, a.Content)
		if a.Text != "" {
			text, _ := json.Marshal(a.Text)
			values = append(values, text)
		}
	}
	var obj map[string]json.RawMessage
	if len(q.Fields) > 0 && json.Unmarshal(a.Content, &obj) == nil {
		for _, f := range q.Fields {
			if v, ok := obj[f.Name]; ok && f.Question.Secret {
				values = append(values, v)
			}
		}
	}
	msg := err.Error()
	generic := fmt.Errorf("the secret answer does not fit the question (the reason is not shown: it would quote the answer); %s", expectation(q))
	for _, v := range values {
		if len(bytes.TrimSpace(v)) == 0 {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return generic
		}
		if s == "" {
			continue
		}
		// The forms a reason quotes a string in: the validator's
		// single quotes, JSON, Go.
		msg = strings.ReplaceAll(msg, schemaQuote(s), "'***'")
		msg = strings.ReplaceAll(msg, string(bytes.TrimSpace(v)), `"***"`)
		msg = strings.ReplaceAll(msg, strconv.Quote(s), `"***"`)
		if strings.Contains(msg, s) {
			return generic
		}
	}
	return errors.New(msg)
}

// schemaQuote quotes s as the jsonschema validator's messages do.
func schemaQuote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func preview(v json.RawMessage) string {
	s, _ := termtext.Shorten(string(bytes.TrimSpace(v)), 60)
	return s
}
