package prompt

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A question is consent when its schema can express yes/no (DESIGN §4).
func TestSchemaConsent(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   bool
	}{
		{"boolean", `{"type":"boolean"}`, true},
		{"nullable boolean", `{"type":["boolean","null"]}`, true},
		{"enum holding a boolean", `{"enum":["later",false]}`, true},
		{"const boolean", `{"const":true}`, true},
		{"string enum with a yes/no word", `{"type":"string","enum":["Proceed","wait"]}`, true},
		{"yes/no word in any case", `{"type":"string","enum":["later","DENY"]}`, true},
		{"oneOf const yes", `{"oneOf":[{"const":"y","title":"Sure"},{"const":"later"}]}`, true},
		{"anyOf reaching boolean", `{"anyOf":[{"type":"string"},{"type":"boolean"}]}`, true},
		{"allOf reaching boolean", `{"allOf":[{"type":"boolean"}]}`, true},
		{"$ref to a boolean", `{"$defs":{"ok":{"type":"boolean"}},"$ref":"#/$defs/ok"}`, true},
		{"form with a yes/no field", `{"type":"object","properties":{"env":{"type":"string"},"go":{"$ref":"#/$defs/b"}},"$defs":{"b":{"type":"boolean"}}}`, true},
		{"array of yes/no", `{"type":"array","items":{"enum":["approve","skip"]}}`, true},
		{"recursive $ref without a boolean", `{"type":"object","properties":{"child":{"$ref":"#"}}}`, false},
		{"string", `{"type":"string"}`, false},
		{"string enum of other words", `{"type":"string","enum":["staging","production"]}`, false},
		{"number", `{"type":"integer","minimum":1}`, false},
		{"form of text fields", `{"type":"object","properties":{"env":{"type":"string"}}}`, false},
		{"unknown $ref fails closed", `{"$ref":"#/$defs/missing"}`, true},
		{"patternProperties of booleans", `{"type":"object","patternProperties":{"^ok$":{"type":"boolean"}}}`, true},
		{"dependentSchemas reaching boolean", `{"type":"object","dependentSchemas":{"a":{"properties":{"go":{"type":"boolean"}}}}}`, true},
		{"draft-7 dependencies reaching boolean", `{"type":"object","dependencies":{"a":{"properties":{"go":{"type":"boolean"}}},"b":["a"]}}`, true},
		{"contains a boolean", `{"type":"array","contains":{"type":"boolean"}}`, true},
		{"unevaluatedProperties of booleans", `{"type":"object","unevaluatedProperties":{"type":"boolean"}}`, true},
		{"unevaluatedItems of booleans", `{"type":"array","unevaluatedItems":{"type":"boolean"}}`, true},
		{"$dynamicRef fails closed", `{"$dynamicRef":"#b","$defs":{"b":{"$dynamicAnchor":"b","type":"string"}}}`, true},
		{"no type admits a boolean", `{"description":"anything"}`, true},
		{"not string admits a boolean", `{"not":{"type":"string"}}`, true},
		{"anyOf with an untyped branch", `{"anyOf":[{"type":"string"},{"minLength":3}]}`, true},
		{"form field without a type", `{"type":"object","properties":{"x":{"description":"any"}}}`, true},
		{"allOf refining a string", `{"type":"string","allOf":[{"minLength":1}]}`, false},
		{"allOf of strings", `{"allOf":[{"type":"string"},{"minLength":1}]}`, false},
		{"enum of numbers", `{"enum":[1,2]}`, false},
		{"property true admits a boolean", `{"type":"object","properties":{"x":true}}`, true},
		{"additionalProperties true", `{"type":"object","properties":{"x":{"type":"string"}},"additionalProperties":true}`, false},
		{"const string", `{"const":"staging"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SchemaConsent(json.RawMessage(tt.schema)); got != tt.want {
				t.Errorf("SchemaConsent(%s) = %v, want %v", tt.schema, got, tt.want)
			}
		})
	}
}

// FromSchema marks yes/no questions and fields as consent, so that the
// policy never defaults them and a terminal never preselects the model's
// default.
func TestFromSchemaConsent(t *testing.T) {
	q, err := FromSchema(json.RawMessage(`{"type":"string","enum":["yes","no"],"default":"yes"}`))
	if err != nil {
		t.Fatal(err)
	}
	if q.Consent != ConsentConfirm || q.Defaultable() || q.PreselectDefault() {
		t.Errorf("yes/no enum: consent %v, defaultable %v", q.Consent, q.Defaultable())
	}
	form, err := FromSchema(json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"},"deploy":{"anyOf":[{"type":"boolean"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if form.Consent != ConsentConfirm || form.Fields[0].Question.Consent != ConsentNone || form.Fields[1].Question.Consent != ConsentConfirm {
		t.Errorf("form consent %v, fields %v %v", form.Consent, form.Fields[0].Question.Consent, form.Fields[1].Question.Consent)
	}
	text, err := FromSchema(json.RawMessage(`{"type":"string","default":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if text.Consent != ConsentNone || !text.Defaultable() {
		t.Errorf("text: consent %v", text.Consent)
	}
}

// No default that holds a yes or a no answers for a person, whatever the
// schema around it (DESIGN §1.1, §5 "Unanswered").
func TestDefaultHoldingABooleanIsNeverUsed(t *testing.T) {
	for _, raw := range []string{
		`{"type":"array","default":[true]}`,
		`{"type":"object","default":{"go":true}}`,
		`{"type":"object","properties":{"name":{"type":"string"}},"default":{"name":"x","go":false}}`,
	} {
		q, err := FromSchema(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if q.Defaultable() {
			t.Errorf("%s: defaultable", raw)
		}
	}
}

// A choice whose options say yes or no grants something whichever dialect
// asked it (AskUserQuestion, ask_user, ask_question): never answered by an
// index, nor by an answers-file entry that does not name it (DESIGN §4).
func TestYesNoOptionsAreConsent(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want bool
	}{
		{"labels Yes/No", []Option{{ID: "Yes", Label: "Yes"}, {ID: "No", Label: "No"}}, true},
		{"ids approve/deny", []Option{{ID: "approve", Label: "Ship it"}, {ID: "later", Label: "Later"}}, true},
		{"label only", []Option{{ID: "a", Label: "OK"}, {ID: "b", Label: "Wait"}}, true},
		{"other words", []Option{{ID: "PostgreSQL", Label: "PostgreSQL"}, {ID: "SQLite", Label: "SQLite"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := Question{Kind: KindChoice, Message: "Delete prod?", Options: tt.opts}
			asked := &recordingFront{}
			a := &Asker{FrontEnd: asked, Unanswered: UnansweredCancel}
			if _, err := a.Ask(context.Background(), q); err != nil {
				t.Fatal(err)
			}
			if got := asked.q.Consent.IsConsent(); got != tt.want {
				t.Errorf("consent %v, want %v", got, tt.want)
			}
			if _, err := Check(asked.q, Answer{Action: Accept, Content: json.RawMessage("0")}); (err != nil) != tt.want {
				t.Errorf("index answer: err %v, want refused %v", err, tt.want)
			}
		})
	}
}

type recordingFront struct{ q Question }

func (f *recordingFront) Ask(_ context.Context, q Question) (Answer, error) {
	f.q = q
	return Answer{Action: Cancel, Source: SourceTTY}, nil
}

// A match written with \Q (quote to the end) is a clear answer, never a
// crash, and still must cover the whole text approved (DESIGN §5).
func TestAnswersMatchQuotedToTheEnd(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(path, []byte("- tool: shell\n  match: '\\Qmake test'\n  content: once\n  repeat: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := LoadAnswers(path)
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]bool{"make test": true, "make test; rm -rf x": false, "xmake test": false} {
		q := ApprovalQuestion("Run "+cmd+"?", true)
		q.Tool, q.Subject = "shell", cmd
		_, ok, err := f.Answer(q)
		if err != nil || ok != want {
			t.Errorf("%q: answered %v (%v), want %v", cmd, ok, err, want)
		}
	}
}
