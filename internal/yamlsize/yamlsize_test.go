package yamlsize

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestCheck(t *testing.T) {
	leaf := strings.Repeat("x", 1000)
	refs := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("*a,", n), ",") + "]" }
	tests := []struct {
		name  string
		doc   string
		limit int64
		ok    bool
	}{
		{"plain", "a: b", 100, true},
		{"alias within", "x: &a " + leaf + "\ny: " + refs(3), 10_000, true},
		{"alias past", "x: &a " + leaf + "\ny: " + refs(20), 10_000, false},
		{"nested laughs", "a: &a [" + leaf + "]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]", 100_000, false},
		{"many small nodes", "[" + strings.Repeat("1,", 10_000) + "1]", 10_000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(tt.doc), &n); err != nil {
				t.Fatal(err)
			}
			err := Check(&n, tt.limit)
			var e *Error
			if tt.ok != (err == nil) || (err != nil && !errors.As(err, &e)) {
				t.Fatalf("Check = %v, want ok %v", err, tt.ok)
			}
		})
	}
	if got := (&Error{Limit: 4 << 20}).Error(); got != "this value expands (through YAML aliases) to more than 4 MiB" {
		t.Fatal(got)
	}
}
