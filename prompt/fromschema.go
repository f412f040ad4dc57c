package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hitl-dev/hitl/prompt/schema"
)

// FromSchema makes a question for content that must satisfy raw, a JSON
// Schema (DESIGN §4): no schema → text; a string enum or a oneOf of
// const/title → choice (enumNames label an enum); an array of enum, or of
// items anyOf/oneOf const/title → choice + multiple; boolean →
// confirm; number/integer → text validated as a number; an object of such
// properties → form; format password or writeOnly → secret; anything else
// → text whose answer is JSON validated against the schema. It fills Kind,
// Title, Options, Multiple, Default, Secret, Schema, Fields and Consent
// (ConsentConfirm where SchemaConsent finds a yes/no, for the question and
// each field); the caller sets Message. A schema that does not compile, or a default that breaks
// it, is an error.
func FromSchema(raw json.RawMessage) (Question, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return Question{Kind: KindText}, nil
	}
	s, err := schema.Compile(raw)
	if err != nil {
		return Question{}, err
	}
	var node schemaNode
	if err := json.Unmarshal(raw, &node); err != nil {
		return Question{}, fmt.Errorf("the schema must be a JSON object: %v", err)
	}
	if len(node.Default) > 0 {
		if err := s.Validate(node.Default); err != nil {
			return Question{}, fmt.Errorf("the schema's default does not satisfy it: %v", err)
		}
	}
	var root any
	_ = json.Unmarshal(raw, &root)
	consentOf := func(n any) Consent {
		if newConsentWalk(root).reaches(n, 0) {
			// A yes/no whose default the model wrote: never used,
			// never preselected.
			return ConsentConfirm
		}
		return ConsentNone
	}
	q := simple(node, raw)
	if node.Type.is("object") && len(node.Properties.names) > 0 {
		q = Question{Kind: KindForm, Title: node.Title, Schema: raw, Default: node.Default}
		required := map[string]bool{}
		for _, r := range node.Required {
			required[r] = true
		}
		for _, name := range node.Properties.names {
			prop := node.Properties.values[name]
			var pn schemaNode
			if err := json.Unmarshal(prop, &pn); err != nil {
				return Question{}, fmt.Errorf("property %s: %v", name, err)
			}
			fq := simple(pn, prop)
			fq.Message = pn.Title
			if fq.Message == "" {
				fq.Message = name
			}
			if pn.Description != "" {
				fq.Hint = pn.Description
			}
			var propNode any
			_ = json.Unmarshal(prop, &propNode)
			fq.Consent = consentOf(propNode)
			q.Fields = append(q.Fields, Field{Name: name, Required: required[name], Question: fq})
		}
	}
	q.Consent = consentOf(root)
	return q, nil
}

// simple maps a schema that is not a form.
func simple(n schemaNode, raw json.RawMessage) Question {
	q := Question{Kind: KindText, Title: n.Title, Schema: raw, Default: n.Default, Hint: n.Description}
	q.Secret = n.Format == "password" || n.WriteOnly
	switch {
	case n.Type.is("boolean"):
		// A yes/no whose default the model wrote: never preselected.
		q.Kind = KindConfirm
	case len(n.Enum) > 0 && allStrings(n.Enum):
		q.Kind = KindChoice
		q.Options = enumOptions(n.Enum, n.EnumNames)
	case len(n.OneOf) > 0 && constChoices(n.OneOf):
		q.Kind = KindChoice
		q.Options = constOptions(n.OneOf)
	case n.Type.is("array") && n.Items != nil && len(n.Items.Enum) > 0 && allStrings(n.Items.Enum):
		q.Kind, q.Multiple = KindChoice, true
		q.Options = enumOptions(n.Items.Enum, n.Items.EnumNames)
	case n.Type.is("array") && n.Items != nil && len(n.Items.AnyOf) > 0 && constChoices(n.Items.AnyOf):
		// MCP's titled multi-select: items {anyOf: [{const, title}]}.
		q.Kind, q.Multiple = KindChoice, true
		q.Options = constOptions(n.Items.AnyOf)
	case n.Type.is("array") && n.Items != nil && len(n.Items.OneOf) > 0 && constChoices(n.Items.OneOf):
		q.Kind, q.Multiple = KindChoice, true
		q.Options = constOptions(n.Items.OneOf)
	}
	return q
}

// enumOptions are the options of a string enum, labelled by enumNames (the
// legacy titled enum of MCP elicitation) when it names every value.
func enumOptions(vals []json.RawMessage, names []string) []Option {
	opts := make([]Option, 0, len(vals))
	for i, e := range vals {
		var s string
		_ = json.Unmarshal(e, &s)
		label := s
		if len(names) == len(vals) && names[i] != "" {
			label = names[i]
		}
		opts = append(opts, Option{ID: s, Label: label})
	}
	return opts
}

// constOptions are the options of alternatives {const, title}.
func constOptions(alts []schemaNode) []Option {
	opts := make([]Option, 0, len(alts))
	for _, o := range alts {
		var id string
		_ = json.Unmarshal(o.Const, &id)
		label := o.Title
		if label == "" {
			label = id
		}
		opts = append(opts, Option{ID: id, Label: label, Description: o.Description})
	}
	return opts
}

func allStrings(vals []json.RawMessage) bool {
	for _, v := range vals {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return false
		}
	}
	return true
}

func constChoices(alts []schemaNode) bool {
	for _, a := range alts {
		var s string
		if len(a.Const) == 0 || json.Unmarshal(a.Const, &s) != nil {
			return false
		}
	}
	return true
}

// schemaNode is the part of a JSON Schema the mapping looks at.
type schemaNode struct {
	Type        typeList          `json:"type"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	Const       json.RawMessage   `json:"const"`
	EnumNames   []string          `json:"enumNames"`
	OneOf       []schemaNode      `json:"oneOf"`
	AnyOf       []schemaNode      `json:"anyOf"`
	Items       *schemaNode       `json:"items"`
	Properties  orderedProps      `json:"properties"`
	Required    []string          `json:"required"`
	Default     json.RawMessage   `json:"default"`
	Format      string            `json:"format"`
	WriteOnly   bool              `json:"writeOnly"`
}

// typeList is "type": "x" or "type": ["x", "null"].
type typeList []string

func (t *typeList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*t = typeList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*t = many
	return nil
}

func (t typeList) is(name string) bool {
	for _, x := range t {
		if x == name {
			return true
		}
	}
	return false
}

// orderedProps keeps the properties of an object schema in the order they
// are written, so a form asks its fields in that order.
type orderedProps struct {
	names  []string
	values map[string]json.RawMessage
}

func (p *orderedProps) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("properties must be an object")
	}
	p.values = map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if _, dup := p.values[name]; !dup {
			p.names = append(p.names, name)
		}
		p.values[name] = v
	}
	return nil
}
