//go:build unix

package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/prompt"
)

// TestCheckedRun: a line allowed without asking is run by hitl from the
// checked tree; each command's final argv is judged again before it runs.
func TestCheckedRun(t *testing.T) {
	secrets := &prompt.Secrets{}
	secrets.Add("hunter2-very-secret")
	t.Setenv("HITL_TEST_API_KEY", "sk-hidden")
	tests := []struct {
		name      string
		allow     []string
		deny      []string
		cmd       string
		want      string // substring of the result
		notWant   string
		isError   bool
		wantAsked bool
	}{
		{name: "builtin", allow: []string{"shell:cmd=echo*"}, cmd: "echo hello", want: "hello\n"},
		{name: "pipe", allow: []string{"shell:cmd=ls*", "shell:cmd=head*"}, cmd: "ls -a | head -1", want: ".\n"},
		{name: "quotes and /dev/null", allow: []string{"shell:cmd=echo*"}, cmd: "echo 'a  b' \"c\" >&2 2>/dev/null", want: "a  b c\n"},
		{name: "exit status", allow: []string{"shell:cmd=ls*"}, cmd: "ls /no/such/dir", want: "[exit status 2]", isError: true},
		{name: "glob expanded, then denied", allow: []string{"shell:cmd=ls*"}, deny: []string{"shell:cmd=ls*secret*"}, cmd: "ls *.txt",
			want: `[stopped before "ls secret.txt" is denied by the permissions rule "shell:cmd=ls*secret*", so it was not run]`, isError: true},
		{name: "no secrets, no hidden keys", allow: []string{"shell:cmd=env"}, cmd: "env", want: "PATH=", notWant: "HITL_SECRET_"},
		{name: "hidden key", allow: []string{"shell:cmd=env"}, cmd: "env", notWant: "sk-hidden"},
		{name: "secret placeholder asks", allow: []string{"shell:cmd=echo*"}, cmd: "echo $HITL_SECRET_1", want: "no one was available", isError: true, wantAsked: true},
		{name: "refused in a pipeline", allow: []string{"shell:cmd=echo*", "shell:cmd=ls*"}, deny: []string{"shell:cmd=ls*secret*"}, cmd: "ls *.txt | ls",
			want: "[stopped before", isError: true},
		{name: "stops at the first refused command", allow: []string{"shell:cmd=echo*", "shell:cmd=ls*"}, deny: []string{"shell:cmd=ls*secret*"}, cmd: "echo before; ls *.txt; echo after",
			want: "before\n[stopped before", notWant: "after", isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "secret.txt"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			asker := &fakeAsker{}
			tool := New(Options{Sandbox: testSandbox(t), BaseDir: dir, Asker: asker, Secrets: secrets, Hide: []string{"HITL_TEST_API_KEY"},
				Env: map[string]string{"HITL_SECRET_9": "set-by-toolset"}, Permissions: checker(t, tt.allow, nil, tt.deny)})
			res, err := call(t, tool, map[string]any{"cmd": tt.cmd})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isError {
				t.Errorf("IsError %v, want %v (%q)", res.IsError, tt.isError, res.Text)
			}
			if !strings.Contains(res.Text, tt.want) || tt.notWant != "" && strings.Contains(res.Text, tt.notWant) {
				t.Errorf("result %q, want it to contain %q and not %q", res.Text, tt.want, tt.notWant)
			}
			if asked := len(asker.questions) > 0; asked != tt.wantAsked {
				t.Errorf("asked %v, want %v", asked, tt.wantAsked)
			}
		})
	}
}

// TestShellThatCannotStart: a line that must run in the toolset's shell
// when that shell cannot start is an infrastructure failure (an error, not
// a result), and such a shell never runs a line unasked.
func TestShellThatCannotStart(t *testing.T) {
	tool := New(Options{Sandbox: testSandbox(t), Shell: "/no/such/bash", Yolo: true, BaseDir: t.TempDir()})
	res, err := call(t, tool, map[string]any{"cmd": "true"})
	if err == nil || !strings.Contains(err.Error(), "cannot start the toolset's shell /no/such/bash") {
		t.Errorf("err %v, result %+v", err, res)
	}
	asker := &fakeAsker{}
	tool = New(Options{Sandbox: testSandbox(t), Shell: "/no/such/bash", Asker: asker, BaseDir: t.TempDir(), Permissions: checker(t, []string{"shell:cmd=echo*"}, nil, nil)})
	res, err = call(t, tool, map[string]any{"cmd": "echo hi"})
	if err != nil || len(asker.questions) != 1 || !strings.Contains(asker.questions[0].Hint, "only dash and bash") {
		t.Errorf("err %v, result %+v, questions %+v", err, res, asker.questions)
	}
}

func TestDialectOf(t *testing.T) {
	real, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Skip(err)
	}
	want := permissions.DialectUnknown
	switch filepath.Base(real) {
	case "dash":
		want = permissions.DialectPOSIX
	case "bash":
		want = permissions.DialectBash
	}
	if got := DialectOf("/bin/sh"); got != want {
		t.Errorf("/bin/sh (%s): %s, want %s", real, got, want)
	}
	if got := DialectOf("bash"); got != permissions.DialectBash {
		t.Errorf("bash: %s", got)
	}
	for _, p := range []string{"/no/such/bash", "zsh-not-installed-here", "/bin/ls"} {
		if got := DialectOf(p); got != permissions.DialectUnknown {
			t.Errorf("%s: %s", p, got)
		}
	}
}

func TestOpenOnlyDevNull(t *testing.T) {
	if _, err := openDevNull(context.Background(), "x", os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		t.Error("opened x")
	}
	f, err := openDevNull(context.Background(), "/dev/null", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestCheckedTimeoutAndKillAll: programs of a checked line run in their own
// process groups, stopped by the timeout and by KillAll.
func TestCheckedTimeoutAndKillAll(t *testing.T) {
	c := checker(t, []string{"shell:cmd=sleep*"}, nil, nil)
	tool := New(Options{Sandbox: testSandbox(t), BaseDir: t.TempDir(), Permissions: c, Grace: 100 * time.Millisecond})
	start := time.Now()
	res, err := call(t, tool, map[string]any{"cmd": "sleep 30", "timeout": 1})
	if err != nil || !strings.Contains(res.Text, "[timed out after 1s") || time.Since(start) > 5*time.Second {
		t.Errorf("timeout: %v %q after %s", err, res.Text, time.Since(start))
	}

	waitIdle(t) // the timed-out command is still being stopped
	tool = New(Options{Sandbox: testSandbox(t), BaseDir: t.TempDir(), Permissions: c, Grace: time.Minute})
	done := make(chan string, 1)
	go func() {
		res, _ := call(t, tool, map[string]any{"cmd": "sleep 30"})
		done <- res.Text
	}()
	waitRunning(t)
	sandbox.KillAll()
	select {
	case text := <-done:
		if !strings.Contains(text, "[exit status 137]") {
			t.Errorf("result %q, want it killed", text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KillAll did not end the command")
	}
}
