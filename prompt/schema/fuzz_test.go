package schema

import "testing"

// FuzzCompileValidate: whatever schema and value a model sends, compiling
// and validating return (an error or not); nothing panics, recurses without
// end or runs away (the library under this package dies of a stack
// overflow on a $ref loop, which no recover catches).
func FuzzCompileValidate(f *testing.F) {
	seeds := []struct{ schema, value string }{
		{`{"type":"object","properties":{"port":{"type":"integer","minimum":1}},"required":["port"]}`, `{"port":0}`},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `1`},
		{`{"$ref":"#","items":{"$ref":"#"}}`, `[[[[1]]]]`},
		{`{"$dynamicAnchor":"x","anyOf":[{"$dynamicRef":"#x"}]}`, `true`},
		{`{"type":"string","format":"date-time","pattern":"^2"}`, `"2026-11-25T10:00:00Z"`},
		{`{"allOf":[{"$ref":"#/$defs/x"}],"$defs":{"x":{"not":{"$ref":"#"}}}}`, `{}`},
		{`{"prefixItems":[{"const":1}],"items":false,"uniqueItems":true}`, `[1,1]`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":{"$ref":"#"}}`, `["a",["b"]]`},
		{`{"patternProperties":{"(a+)+$":{"type":"integer"}},"additionalProperties":false}`, `{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!":1}`},
	}
	for _, s := range seeds {
		f.Add(s.schema, s.value)
	}
	f.Fuzz(func(t *testing.T, schema, value string) {
		s, err := Compile([]byte(schema))
		if err != nil {
			return
		}
		_ = s.Validate([]byte(value))
	})
}
