package exec

import (
	"encoding/json"
	"testing"
)

// FuzzArgumentsReadOnce: whatever JSON object the model sends, either it
// is refused, or what the rules read (the exact keys of one decode) is
// what a tool reading the same bytes into its struct gets (Go's decoding
// matches keys without case and takes the last of two). Case twins,
// duplicate keys and escaped keys are the cases that differ.
func FuzzArgumentsReadOnce(f *testing.F) {
	for _, seed := range []string{
		`{"cmd":"git status","cwd":"/app"}`,
		`{"cmd":"git status","cwd":"/app","CWD":"/evil"}`,
		`{"cmd":"ls","cmd":"rm -rf /"}`,
		`{"c\u006dd":"ls","cmd":"touch x"}`,
		`{"CMD":"touch x"}`,
		`{"cmd":"ls","Cwd":"/evil"}`,
		`{"cmd":"\u0024HITL_SECRET_1"}`,
		`{"cmd":"ls","cwd":null}`,
		`{"cmd":"ls","x":{"a":1,"A":2}}`,
		`{"cmd":"ls","cwd":"/app","ᴄwd":"/evil"}`,
		`{"cmd":"ls","cwd":"/app","cwdſ":"/evil"}`,
	} {
		f.Add([]byte(seed))
	}
	params := json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"},"cwd":{"type":"string"},"task":{"type":"string"}}}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var rules map[string]any
		if json.Unmarshal(data, &rules) != nil {
			return // not an object: the tool refuses it too
		}
		if checkArgumentKeys(data, params) != nil {
			return // refused before any reading
		}
		var tool struct {
			Cmd  *string `json:"cmd"`
			Cwd  *string `json:"cwd"`
			Task *string `json:"task"`
		}
		if json.Unmarshal(data, &tool) != nil {
			return
		}
		for name, got := range map[string]*string{"cmd": tool.Cmd, "cwd": tool.Cwd, "task": tool.Task} {
			want, ok := rules[name].(string)
			switch {
			case got == nil && ok:
				t.Fatalf("%s: the rules read %s=%q, the tool nothing", data, name, want)
			case got != nil && !ok && rules[name] != nil:
				t.Fatalf("%s: the tool read %s=%q, the rules %v", data, name, *got, rules[name])
			case got != nil && ok && *got != want:
				t.Fatalf("%s: the rules read %s=%q, the tool %q", data, name, want, *got)
			case got != nil && rules[name] == nil && *got != "":
				t.Fatalf("%s: the tool read %s=%q, the rules nothing", data, name, *got)
			}
		}
	})
}
