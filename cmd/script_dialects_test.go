package cmd_test

import (
	"encoding/json"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdToolResult checks that stdout (JSONL events) holds a tool.result of the
// tool NAME whose result is exactly TEXT, as the model receives it; with
// -error, an error result: toolresult [-error] NAME TEXT. TEXT @FILE is the
// content of FILE, without its final newline.
func cmdToolResult(ts *testscript.TestScript, neg bool, args []string) {
	wantError := len(args) > 0 && args[0] == "-error"
	if wantError {
		args = args[1:]
	}
	if len(args) != 2 {
		ts.Fatalf("usage: toolresult [-error] NAME TEXT")
	}
	if file, ok := strings.CutPrefix(args[1], "@"); ok {
		args[1] = strings.TrimSuffix(ts.ReadFile(file), "\n")
	}
	var seen []string
	for _, line := range strings.Split(ts.ReadFile("stdout"), "\n") {
		var ev struct {
			Type    string `json:"type"`
			Name    string `json:"name"`
			Result  string `json:"result"`
			IsError bool   `json:"is_error"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Type != "tool.result" || ev.Name != args[0] {
			continue
		}
		if ev.Result == args[1] && ev.IsError == wantError {
			if neg {
				ts.Fatalf("unexpected tool.result of %s: %s", args[0], line)
			}
			return
		}
		seen = append(seen, line)
	}
	if !neg {
		ts.Fatalf("no tool.result of %s with result %s (is_error %v); its results:\n%s", args[0], args[1], wantError, strings.Join(seen, "\n"))
	}
}
