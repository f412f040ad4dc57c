package schema

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Schemas a model may write to hurt the runner are refused when compiled,
// saying what is wrong and where: a $ref loop would recurse until the
// process dies, shared $refs would multiply the work without end, and a
// keyword of the wrong shape would make a question nobody can answer.
func TestCompileRefusesHostileSchemas(t *testing.T) {
	deepChain := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
		for i := range n {
			fmt.Fprintf(&b, `"d%d":{"properties":{"a":{"$ref":"#/$defs/d%d"},"b":{"$ref":"#/$defs/d%[2]d"}},"additionalProperties":{"$ref":"#/$defs/d%[2]d"}},`, i, i+1)
		}
		fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, n)
		return b.String()
	}
	tests := []struct{ name, schema, want string }{
		{"ref to itself", `{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, "loop without going into the value (/$defs/a → /$defs/a)"},
		{"ref to the root", `{"allOf":[{"$ref":"#"}]}`, "loop without going into the value"},
		{"loop through anyOf", `{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"}]},"b":{"not":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}`, "loop without going into the value"},
		{"loop by anchor", `{"$defs":{"a":{"$anchor":"x","oneOf":[{"$ref":"#x"}]}}}`, "loop without going into the value"},
		{"shared refs", chainOf(40), "more than 10000 subschemas apply to one value"},
		{"shared refs deeper", deepChain(40), "more than 10000 subschemas apply to the values at one depth"},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, "never loaded"},
		{"missing ref", `{"$ref":"#/$defs/none"}`, `there is no subschema at "#/$defs/none"`},
		{"missing anchor", `{"$ref":"#none"}`, `there is no $anchor "none"`},
		{"dynamic ref loop", `{"$dynamicAnchor":"x","allOf":[{"$dynamicRef":"#x"}]}`, "loop without going into the value"},
		{"dynamic ref to an anchor elsewhere", `{"$defs":{"a":{"$dynamicAnchor":"x","anyOf":[{"$ref":"#/$defs/b"}]},"b":{"$dynamicRef":"#x"}},"$ref":"#/$defs/b"}`, "loop without going into the value"},
		{"recursive ref", `{"$recursiveRef":"#"}`, "$recursiveRef is not supported"},
		{"keyword in another case", `{"$rEf":"#","items":{"$ref":"#"}}`, `keyword "$rEf" is not $ref: keywords are case-sensitive`},
		{"keyword with a folding letter", `{"properties":{"a":{"itemſ":{"$ref":"#"}}}}`, `at /properties/a: keyword "itemſ" is not items`},
		{"inner id", `{"properties":{"a":{"$id":"https://example.com/a"}}}`, "at /properties/a: an $id inside the schema is not supported"},
		{"unknown type", `{"properties":{"a":{"type":"strin"}}}`, "at /properties/a: type 'strin' is not a type: use one of array, boolean"},
		{"type twice", `{"type":["string","string"]}`, `type "string" is named twice`},
		{"negative count", `{"minLength":-1}`, "minLength must be a whole number from 0, not -1"},
		{"fractional count", `{"maxItems":1.5}`, "maxItems must be a whole number from 0, not 1.5"},
		{"zero multipleOf", `{"multipleOf":0}`, "multipleOf must be greater than 0"},
		{"string minimum", `{"minimum":"1"}`, "minimum must be a number, not a string"},
		{"bad pattern", `{"pattern":"(?<=a)b"}`, "not a regular expression hitl can use"},
		{"required not a list", `{"required":"a"}`, "required must be an array of property names"},
		{"schema not an object", `{"properties":{"a":5}}`, "at /properties/a: a schema must be an object or true or false, not a number"},
		{"empty anyOf", `{"anyOf":[]}`, "anyOf must be a non-empty array of schemas"},
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#"}`, "not a draft hitl validates"},
		{"inner $schema", `{"properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`, "$schema is only read at the top"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := Compile([]byte(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("refusing took %v", d)
			}
		})
	}
}

// Recursion that goes into the value, shared subschemas within bounds, and
// the drafts hitl reads all compile and validate.
func TestCompileAcceptsRecursionIntoTheValue(t *testing.T) {
	tests := []struct{ name, schema, good, bad, want string }{
		{"tree", `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]}}}`,
			`{"name":"a","kids":[{"name":"b","kids":[]}]}`, `{"name":"a","kids":[{"kids":[]}]}`, "at /kids/0: missing property 'name'"},
		{"root recursion", `{"type":"object","properties":{"next":{"$ref":"#"},"v":{"type":"integer"}}}`,
			`{"next":{"next":{"v":1}}}`, `{"next":{"next":{"v":"x"}}}`, "at /next/next/v: got string, want integer"},
		{"anchor", `{"$defs":{"p":{"$anchor":"port","type":"integer","minimum":1}},"properties":{"port":{"$ref":"#port"}}}`,
			`{"port":8080}`, `{"port":0}`, "at /port: minimum: got 0, want 1"},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"items":[{"$ref":"#/definitions/s"}],"additionalItems":false}`,
			`["a"]`, `["a",1]`, "at /1: no value is allowed here"},
		{"shared within bounds", chainOf(8), `"x"`, `1`, "anyOf: the value fits none of its 2 schemas"},
		{"dynamic ref", `{"$dynamicRef":"#b","$defs":{"b":{"$dynamicAnchor":"b","type":"boolean"}}}`, `true`, `"yes"`, `want "boolean"`},
		{"own id", `{"$id":"https://example.com/s.json","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"https://example.com/s.json#/$defs/s"}}}`,
			`{"a":"x"}`, `{"a":1}`, "at /a: got integer, want string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile([]byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate([]byte(tt.good)); err != nil {
				t.Errorf("good value: %v", err)
			}
			err = s.Validate([]byte(tt.bad))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("bad value: %v, want %q", err, tt.want)
			}
		})
	}
}

func chainOf(n int) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%[2]d"}]},`, i, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, n)
	return b.String()
}

// Each failed keyword is worded with what was given and what was wanted,
// at the deepest part of the value that fails.
func TestValidationMessages(t *testing.T) {
	tests := []struct{ schema, value, want string }{
		{`{"type":"boolean"}`, `"x"`, "got string, want boolean"},
		{`{"type":["string","null"]}`, `1`, "got integer, want string or null"},
		{`{"type":"integer"}`, `1.5`, "got number, want integer"},
		{`{"type":"object","properties":{"port":{"type":"integer","minimum":1}}}`, `{"port":0}`, "at /port: minimum: got 0, want 1"},
		{`{"maximum":10}`, `10.5`, "maximum: got 10.5, want 10"},
		{`{"exclusiveMinimum":0}`, `0`, "exclusiveMinimum: got 0, want 0"},
		{`{"multipleOf":5}`, `12`, "12 is not a multiple of 5"},
		{`{"minLength":3}`, `"añ"`, "minLength: got 2, want 3"},
		{`{"maxLength":1}`, `"ab"`, "maxLength: got 2, want 1"},
		{`{"pattern":"^a+$"}`, `"it's"`, `'it\'s' does not match pattern '^a+$'`},
		{`{"pattern":"^a+$"}`, `"\u001b[2J"`, `'\x1b[2J' does not match pattern`},
		{`{"enum":["dev","prod"]}`, `"staging"`, "value must be one of 'dev', 'prod'"},
		{`{"const":42}`, `41`, "value must be 42"},
		{`{"minItems":2}`, `[1]`, "minItems: got 1, want 2"},
		{`{"uniqueItems":true}`, `[1,1]`, "items must be unique"},
		{`{"required":["a","b"]}`, `{}`, "missing properties 'a', 'b'"},
		{`{"required":["a"]}`, `{"b":1}`, "missing property 'a'"},
		{`{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"z":2,"extra":3}`, "additional properties 'extra', 'z' not allowed"},
		{`{"maxProperties":1}`, `{"a":1,"b":2}`, "maxProperties: got 2, want 1"},
		{`{"allOf":[{"properties":{"a":{"type":"string"}}}]}`, `{"a":1}`, "at /a: got integer, want string"},
		{`{"prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`, `["a","b"]`, "at /1: got string, want integer"},
		{`{"patternProperties":{"^x-":{"type":"integer"}}}`, `{"x-a":"no"}`, "at /x-a: got string, want integer"},
		{`{"properties":{"a/b":{"type":"integer"}}}`, `{"a/b":"no"}`, "at /a~1b: got string, want integer"},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`, "anyOf"},
		{`{"not":{"type":"string"}}`, `"x"`, "not"},
	}
	for _, tt := range tests {
		t.Run(tt.schema+" "+tt.value, func(t *testing.T) {
			s, err := Compile([]byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			err = s.Validate([]byte(tt.value))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// A value nested deeper than MaxValueDepth is refused at once (the
// library would build its error level by level, for seconds); one just
// within it is validated, and a bad part down there is named.
func TestValidateDeepValue(t *testing.T) {
	s, err := Compile([]byte(`{"type":"array","items":{"$ref":"#"}}`))
	if err != nil {
		t.Fatal(err)
	}
	nest := func(n int, inner string) []byte {
		return []byte(strings.Repeat("[", n) + inner + strings.Repeat("]", n))
	}
	start := time.Now()
	if err := s.Validate(nest(9000, "1")); err == nil || !strings.Contains(err.Error(), "nested deeper than 512 levels") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %v", d)
	}
	if err := s.Validate(nest(MaxValueDepth, "")); err != nil {
		t.Fatal(err)
	}
	// Named 64 levels down (where looking stops), with the library's words.
	if err := s.Validate(nest(MaxValueDepth-1, "1")); err == nil || !strings.Contains(err.Error(), "at "+strings.Repeat("/0", 64)+": type: 1 has type \"integer\", want \"array\"") {
		t.Fatalf("err = %v", err)
	}
}
