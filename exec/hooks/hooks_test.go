package hooks

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/hitl-dev/hitl/config"
)

// fake answers each command with its scripted outcome.
type fake map[string]struct {
	out, errOut string
	exit        int
	err         error
}

func (f fake) RunHook(_ context.Context, command string, _ []byte) ([]byte, []byte, int, error) {
	o := f[command]
	return []byte(o.out), []byte(o.errOut), o.exit, o.err
}

func TestRunCombines(t *testing.T) {
	f := fake{
		"deny":     {out: `{"hook_specific_output":{"permission_decision":"deny","permission_decision_reason":"no"}}`},
		"allow":    {out: `{"hook_specific_output":{"permission_decision":"allow"}}`},
		"ask":      {out: `{"hook_specific_output":{"permission_decision":"ask"}}`},
		"exit2":    {errOut: "stop it\n", exit: 2},
		"exit1":    {errOut: "boom", exit: 1},
		"crash":    {err: errors.New("killed")},
		"block":    {out: `{"decision":"block","reason":"policy"}`},
		"halt":     {out: `{"continue":false,"stop_reason":"enough"}`},
		"rewrite1": {out: `{"hook_specific_output":{"updated_input":{"cmd":"a","n":1}}}`},
		"rewrite2": {out: `{"hook_specific_output":{"updated_input":{"cmd":"b"}}}`},
		"plain":    {out: "hello there\n"},
		"notJSON":  {out: "{not json"},
		"sysmsg":   {out: `{"system_message":"note this"}`},
	}
	hooks := func(cmds ...string) []config.Hook {
		var out []config.Hook
		for _, c := range cmds {
			out = append(out, config.Hook{Command: c})
		}
		return out
	}
	tests := []struct {
		name     string
		event    string
		cmds     []string
		blocked  bool
		decision string
		failed   int
		message  string
		context  string
		cmd      any
	}{
		{"deny wins over allow", config.HookPermissionRequest, []string{"allow", "deny"}, true, "deny", 0, "no", "", nil},
		{"allow alone", config.HookPermissionRequest, []string{"allow"}, false, "allow", 0, "", "", nil},
		{"ask decides nothing", config.HookPermissionRequest, []string{"ask"}, false, "", 0, "", "", nil},
		{"exit 2 blocks with stderr", config.HookPreToolUse, []string{"exit2"}, true, "", 0, "stop it", "", nil},
		{"exit 2 is a deny for permission", config.HookPermissionRequest, []string{"exit2"}, true, "deny", 0, "stop it", "", nil},
		{"other exit fails", config.HookPreToolUse, []string{"exit1"}, false, "", 1, "", "", nil},
		{"not run fails", config.HookPreToolUse, []string{"crash", "allow"}, false, "allow", 1, "", "", nil},
		{"decision block", config.HookPreToolUse, []string{"block"}, true, "", 0, "policy", "", nil},
		{"continue false", config.HookPreToolUse, []string{"halt"}, true, "", 0, "enough", "", nil},
		{"updated inputs merge in order", config.HookPreToolUse, []string{"rewrite1", "rewrite2"}, false, "", 0, "", "", "b"},
		{"plain stdout is context at session start", config.HookSessionStart, []string{"plain"}, false, "", 0, "", "hello there", nil},
		{"plain stdout is nothing before a tool", config.HookPreToolUse, []string{"plain"}, false, "", 0, "", "", nil},
		{"broken JSON is plain text", config.HookPostToolUse, []string{"notJSON"}, false, "", 0, "", "{not json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Runner{Start: f}
			res := r.Run(context.Background(), hooks(tt.cmds...), Input{Event: tt.event})
			if res.Blocked != tt.blocked || res.Decision != tt.decision || res.Failed != tt.failed || res.Message != tt.message || res.Context != tt.context {
				t.Errorf("got blocked=%v decision=%q failed=%d message=%q context=%q", res.Blocked, res.Decision, res.Failed, res.Message, res.Context)
			}
			if tt.cmd != nil && (res.UpdatedInput == nil || res.UpdatedInput["cmd"] != tt.cmd || res.UpdatedInput["n"] != 1.0) {
				t.Errorf("updated input %v, want cmd %v and n 1", res.UpdatedInput, tt.cmd)
			}
		})
	}
	res := (&Runner{Start: f}).Run(context.Background(), hooks("sysmsg"), Input{Event: config.HookPostToolUse})
	if len(res.Notices) != 1 || res.Notices[0] != "note this" {
		t.Errorf("notices %q", res.Notices)
	}
}

// io.Copy (what os/exec uses) goes through Write: the bound holds.
func TestCappedBoundsCopy(t *testing.T) {
	var c Capped
	_, err := io.Copy(&c, io.LimitReader(zeros{}, 4*MaxOutput))
	if err == nil || !c.Over || len(c.Bytes()) != MaxOutput {
		t.Errorf("err %v, over %v, kept %d", err, c.Over, len(c.Bytes()))
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { return len(p), nil }
