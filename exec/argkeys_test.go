package exec

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckArgumentKeys(t *testing.T) {
	params := json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"},"cwd":{"type":"string"}}}`)
	tests := []struct {
		args, wantErr string
	}{
		{`{"cmd":"git status","cwd":"/app"}`, ""},
		{`{"cmd":"git status","cwd":"/app","CWD":"/evil"}`, `the keys "cwd" and "CWD" differ only in case`},
		{`{"cmd":"git status","CWD":"/evil"}`, `the key "CWD" differs only in case from the parameter "cwd"`},
		{`{"cmd":"ls","cmd":"rm -rf /"}`, `the key "cmd" is given twice`},
		{`{"cmd":"ls","env":{"A":"1","a":"2"}}`, `differ only in case at /env`},
		{`{"cmd":"ls","list":[{"k":1,"k":2}]}`, `given twice at /list/0`},
		{`{"cmd":"ls","other":"x"}`, ""},
		{`{"cmd":"ls","cwd":"/app","Kwd":"x"}`, ""},
		{`{"urls":["https://ok/"],"urlſ":["http://evil/"]}`, `differ only in case`},
	}
	for _, tt := range tests {
		err := checkArgumentKeys(json.RawMessage(tt.args), params)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: %v, want %q", tt.args, err, tt.wantErr)
		}
	}
}
