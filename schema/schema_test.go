package schema

import (
	"strings"
	"testing"
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
