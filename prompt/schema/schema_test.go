package schema

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name, schema, value, wantErr string
	}{
		{"ok string", `{"type":"string"}`, `"x"`, ""},
		{"wrong type", `{"type":"boolean"}`, `"x"`, "want boolean"},
		{"nested", `{"type":"object","properties":{"port":{"type":"integer","minimum":1}}}`, `{"port":0}`, "at /port: "},
		{"format", `{"type":"string","format":"email"}`, `"nope"`, "email"},
		{"not json", `{"type":"string"}`, `nope`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile([]byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			err = s.Validate([]byte(tt.value))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	for _, raw := range []string{`{"type":"nope"}`, `{"$ref":"http://example.com/s.json"}`, `not json`, `{"minimum":"x"}`} {
		if _, err := Compile([]byte(raw)); err == nil {
			t.Errorf("Compile(%s) succeeded, want an error", raw)
		}
	}
}

// Numbers too large or too small for exact arithmetic (the validator's
// big.Rat gives up on them and would crash) are an error, never a panic:
// an answer line, a model's tool arguments or a model's schema.
func TestOutOfRangeNumbers(t *testing.T) {
	values := []struct{ schema, value string }{
		{`{"type":"number","maximum":10}`, `1E10000000`},
		{`{"type":"number","minimum":1}`, `-1e-10000000`},
		{`{"type":"object","properties":{"n":{"type":"number","multipleOf":2}}}`, `{"n":1E400000000}`},
		{`{"type":"array","uniqueItems":true}`, `[1E10000000, 2]`},
		{`{"type":"number","maximum":10}`, `1E20000`},
	}
	for _, v := range values {
		s, err := Compile([]byte(v.schema))
		if err != nil {
			t.Fatal(err)
		}
		err = s.Validate([]byte(v.value))
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Validate(%s) against %s: %v, want an out of range error", v.value, v.schema, err)
		}
	}
	// Ordinary large and small numbers still validate.
	s, err := Compile([]byte(`{"type":"number","maximum":1e300}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte(`1e299`)); err != nil {
		t.Errorf("1e299: %v", err)
	}
	if err := s.Validate([]byte(`-2.5e-300`)); err != nil {
		t.Errorf("-2.5e-300: %v", err)
	}
	for _, raw := range []string{
		`{"$schema":"http://json-schema.org/draft-04/schema#","enum":[1E10000000,1]}`,
		`{"type":"number","maximum":1E10000000}`,
	} {
		if _, err := Compile([]byte(raw)); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Compile(%s): %v, want an out of range error", raw, err)
		}
	}
}

// A model's schema nested past MaxDepth, or holding more than MaxNodes
// objects and arrays, is refused at once with a clear error: compiling
// grows much faster than either (3000 levels of anyOf, or 30000
// properties, took minutes), and no question needs that much.
func TestCompileRefusesDeepNesting(t *testing.T) {
	deep := `{"type":"string"}`
	for range 3000 {
		deep = `{"anyOf":[` + deep + `]}`
	}
	start := time.Now()
	_, err := Compile([]byte(deep))
	if err == nil || !strings.Contains(err.Error(), "nested deeper than") {
		t.Errorf("err = %v, want nested deeper than", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %v", d)
	}
	ok := `{"type":"string"}`
	for range 30 {
		ok = `{"type":"object","properties":{"a":` + ok + `}}`
	}
	if _, err := Compile([]byte(ok)); err != nil {
		t.Errorf("a schema 60 levels deep: %v", err)
	}
	var wide strings.Builder
	wide.WriteString(`{"type":"object","properties":{`)
	for i := range 30000 {
		if i > 0 {
			wide.WriteString(",")
		}
		fmt.Fprintf(&wide, `"p%d":{"anyOf":[{"type":"string"},{"type":"integer"}]}`, i)
	}
	wide.WriteString(`}}`)
	start = time.Now()
	if _, err := Compile([]byte(wide.String())); err == nil || !strings.Contains(err.Error(), "more than 4096 objects and arrays") {
		t.Errorf("30000 properties: err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %v", d)
	}
}
