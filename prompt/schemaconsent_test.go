package prompt

import (
	"encoding/json"
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
