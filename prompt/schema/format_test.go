package schema

import (
	"encoding/json"
	"testing"
)

func TestFormats(t *testing.T) {
	tests := []struct {
		format, value string
		ok            bool
	}{
		{"email", "joe@example.com", true},
		{"email", "first.last+tag@sub.example.co.uk", true},
		{"email", `"joe smith"@example.com`, true},
		{"email", "joe@[192.0.2.1]", true},
		{"email", "joe@[IPv6:2001:db8::1]", true},
		{"email", "nope", false},
		{"email", "@example.com", false},
		{"email", "joe@", false},
		{"email", "jo..e@example.com", false},
		{"email", "joe smith@example.com", false},
		{"email", "joe@-example.com", false},
		{"email", "joe@exa_mple.com", false},

		{"uri", "https://example.com/a?b=c#d", true},
		{"uri", "urn:isbn:0451450523", true},
		{"uri", "mailto:joe@example.com", true},
		{"uri", "/relative/path", false},
		{"uri", "https://exa mple.com", false},
		{"uri", "https://example.com/\x1b[31m", false},
		{"uri", "https://example.com/%zz", false},

		{"date", "2026-02-28", true},
		{"date", "2024-02-29", true},
		{"date", "2026-02-29", false},
		{"date", "2026-13-01", false},
		{"date", "2026-1-01", false},
		{"date", "26-01-01", false},

		{"time", "23:59:59Z", true},
		{"time", "08:30:00.123+02:00", true},
		{"time", "23:59:60Z", true},
		{"time", "01:59:60+02:00", true},
		{"time", "12:59:60Z", false},
		{"time", "24:00:00Z", false},
		{"time", "08:30:00", false},
		{"time", "08:30Z", false},
		{"time", "08:30:00.+02:00", false},

		{"date-time", "2026-11-25T08:30:00Z", true},
		{"date-time", "2026-11-25t08:30:00.5-05:00", true},
		{"date-time", "2026-11-25 08:30:00Z", false},
		{"date-time", "2026-11-31T08:30:00Z", false},

		{"ipv4", "192.0.2.1", true},
		{"ipv4", "0.0.0.0", true},
		{"ipv4", "256.0.0.1", false},
		{"ipv4", "01.2.3.4", false},
		{"ipv4", "1.2.3", false},
		{"ipv4", "::1", false},

		{"ipv6", "2001:db8::1", true},
		{"ipv6", "::ffff:192.0.2.1", true},
		{"ipv6", "::1", true},
		{"ipv6", "fe80::1%eth0", false},
		{"ipv6", "192.0.2.1", false},
		{"ipv6", "2001:db8:::1", false},

		{"uuid", "123e4567-e89b-12d3-a456-426614174000", true},
		{"uuid", "123E4567-E89B-12D3-A456-426614174000", true},
		{"uuid", "123e4567e89b12d3a456426614174000", false},
		{"uuid", "123e4567-e89b-12d3-a456-42661417400g", false},
	}
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.value, func(t *testing.T) {
			s, err := Compile([]byte(`{"type":"string","format":"` + tt.format + `"}`))
			if err != nil {
				t.Fatal(err)
			}
			v, _ := jsonString(tt.value)
			err = s.Validate(v)
			if tt.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.ok && err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// Formats are asserted in the parts of a value too, saying where; an
// unknown format is an annotation; a non-string is not checked.
func TestFormatsInParts(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"who":{"type":"array","items":{"format":"email"}},"n":{"format":"uuid"},"x":{"format":"color"}},"$defs":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	for value, want := range map[string]string{
		`{"who":["a@example.com","nope"]}`: "at /who/1: 'nope' is not a valid email: missing @",
		`{"n":5,"x":"mauve"}`:              "",
	} {
		err := s.Validate([]byte(value))
		if got := errText(err); got != want {
			t.Errorf("%s: got %q, want %q", value, got, want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func jsonString(s string) ([]byte, error) { return json.Marshal(s) }
