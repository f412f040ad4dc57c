package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/prompt"
)

// fakeAsker answers questions from a list; past its end nobody answers.
type fakeAsker struct {
	answers   []prompt.Answer
	questions []prompt.Question
	err       error
}

func (f *fakeAsker) Ask(ctx context.Context, q prompt.Question) (prompt.Answer, error) {
	f.questions = append(f.questions, q)
	if f.err != nil {
		return prompt.Answer{}, f.err
	}
	if len(f.answers) == 0 {
		return prompt.Answer{Action: prompt.Cancel, Source: prompt.SourceEOF}, nil
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	if a.Source == "" {
		a.Source = prompt.SourceJSONL
	}
	return a, nil
}

func choose(id string) prompt.Answer {
	return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(strconv.Quote(id))}
}

func call(t *testing.T, tool *Tool, args map[string]any) (exec.Result, error) {
	t.Helper()
	data, _ := json.Marshal(args)
	return tool.Call(context.Background(), exec.ToolCall{ID: "call_1", Name: Name, Arguments: data})
}

func checker(t *testing.T, allow, ask, deny []string) *permissions.Checker {
	t.Helper()
	c, err := permissions.New(allow, ask, deny)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestApprovals(t *testing.T) {
	type step struct {
		cmd       string
		wantRun   bool
		wantAsked bool
		wantText  string
	}
	tests := []struct {
		name    string
		answers []prompt.Answer
		yolo    bool
		allow   []string
		ask     []string
		deny    []string
		steps   []step
	}{
		{name: "nobody to ask", steps: []step{
			{cmd: "touch made", wantAsked: true, wantText: "not approved: " + prompt.NobodyToApprove},
		}},
		{name: "once", answers: []prompt.Answer{choose("once")}, steps: []step{
			{cmd: "touch made", wantRun: true, wantAsked: true},
			{cmd: "touch made", wantAsked: true, wantText: "no one was available"},
		}},
		{name: "session", answers: []prompt.Answer{choose("session")}, steps: []step{
			{cmd: "touch made", wantRun: true, wantAsked: true},
			{cmd: "touch made", wantRun: true},
			{cmd: "touch made ", wantAsked: true, wantText: "no one was available"},
		}},
		{name: "no", answers: []prompt.Answer{choose("no")}, steps: []step{
			{cmd: "touch made", wantAsked: true, wantText: "the user did not approve this command"},
		}},
		{name: "index", answers: []prompt.Answer{{Action: prompt.Accept, Content: json.RawMessage(`"once"`)}}, steps: []step{
			{cmd: "touch made", wantRun: true, wantAsked: true},
		}},
		{name: "decline", answers: []prompt.Answer{{Action: prompt.Decline}}, steps: []step{
			{cmd: "touch made", wantAsked: true, wantText: "the user did not approve this command"},
		}},
		{name: "cancel by a person", answers: []prompt.Answer{{Action: prompt.Cancel}}, steps: []step{
			{cmd: "touch made", wantAsked: true, wantText: "the user did not approve this command"},
		}},
		{name: "feedback", answers: []prompt.Answer{{Action: prompt.Accept, Text: "use make clean"}}, steps: []step{
			{cmd: "touch made", wantAsked: true, wantText: "The user said: use make clean"},
		}},
		{name: "timeout of the prompt", answers: []prompt.Answer{{Action: prompt.Cancel, Source: prompt.SourceTimeout}}, steps: []step{
			{cmd: "touch made", wantAsked: true, wantText: "no one was available"},
		}},
		{name: "yolo", yolo: true, steps: []step{
			{cmd: "touch made", wantRun: true},
		}},
		{name: "deny beats yolo", yolo: true, deny: []string{"shell:cmd=touch*"}, steps: []step{
			{cmd: "echo hi && touch made", wantText: `denied by the permissions rule "shell:cmd=touch*"`},
		}},
		{name: "ask beats yolo", yolo: true, ask: []string{"shell:cmd=touch*"}, steps: []step{
			{cmd: "touch made", wantAsked: true, wantText: "no one was available"},
		}},
		{name: "allow", allow: []string{"shell:cmd=touch made"}, steps: []step{
			{cmd: "touch made", wantRun: true},
		}},
		{name: "allow does not cover a list", allow: []string{"shell:cmd=echo*"}, steps: []step{
			{cmd: "echo hi; touch made", wantAsked: true, wantText: "no one was available"},
			{cmd: "echo $(touch made)", wantAsked: true, wantText: "no one was available"},
			{cmd: "echo hi > made", wantAsked: true, wantText: "no one was available"},
			{cmd: "X=1 echo hi", wantAsked: true, wantText: "no one was available"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			asker := &fakeAsker{answers: tt.answers}
			tool := New(Options{Sandbox: testSandbox(t), BaseDir: dir, Asker: asker, Yolo: tt.yolo, Permissions: checker(t, tt.allow, tt.ask, tt.deny)})
			for i, s := range tt.steps {
				os.Remove(filepath.Join(dir, "made"))
				asked := len(asker.questions)
				res, err := call(t, tool, map[string]any{"cmd": s.cmd})
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				_, statErr := os.Stat(filepath.Join(dir, "made"))
				if ran := statErr == nil; ran != s.wantRun {
					t.Errorf("step %d %q: ran %v, want %v (result %q)", i, s.cmd, ran, s.wantRun, res.Text)
				}
				if got := len(asker.questions) > asked; got != s.wantAsked {
					t.Errorf("step %d %q: asked %v, want %v", i, s.cmd, got, s.wantAsked)
				}
				if res.IsError == s.wantRun {
					t.Errorf("step %d %q: IsError %v (%q)", i, s.cmd, res.IsError, res.Text)
				}
				if !strings.Contains(res.Text, s.wantText) {
					t.Errorf("step %d %q: result %q, want it to contain %q", i, s.cmd, res.Text, s.wantText)
				}
			}
		})
	}
}

func TestApprovalQuestion(t *testing.T) {
	dir := t.TempDir()
	asker := &fakeAsker{}
	tool := New(Options{Sandbox: testSandbox(t), BaseDir: dir, Asker: asker})
	if _, err := call(t, tool, map[string]any{"cmd": "rm -rf \x1b[2Jbuild"}); err != nil {
		t.Fatal(err)
	}
	q := asker.questions[0]
	if !strings.Contains(q.Message, "rm -rf \x1b[2Jbuild") || !strings.Contains(q.Message, dir) {
		t.Errorf("message %q lacks the command or the directory", q.Message)
	}
	if q.Kind != prompt.KindChoice || q.Consent != prompt.ConsentApproval || q.Tool != "shell" || q.CallID != "call_1" || string(q.Default) != `"no"` {
		t.Errorf("question %+v", q)
	}
	var ids []string
	for _, o := range q.Options {
		ids = append(ids, o.ID+"="+o.Label)
	}
	if got := strings.Join(ids, ","); got != "once=Yes, once,session=Yes, for this session,no=No" {
		t.Errorf("options %s", got)
	}
	// A consent question is answered by naming the option, never by an
	// index (DESIGN §4).
	if _, err := prompt.Check(q, prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"once"`)}); err != nil {
		t.Error(err)
	}
	if _, err := prompt.Check(q, prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`0`)}); err == nil || !strings.Contains(err.Error(), "name the option") {
		t.Errorf("an index answered an approval: %v", err)
	}
	if q.Subject != "rm -rf \x1b[2Jbuild" {
		t.Errorf("subject %q, want the command line", q.Subject)
	}

	// An error from the asker (an interrupt, a bad line) stops the run.
	stop := errors.New("bad answer line")
	tool = New(Options{Sandbox: testSandbox(t), BaseDir: dir, Asker: &fakeAsker{err: stop}})
	if _, err := call(t, tool, map[string]any{"cmd": "true"}); !errors.Is(err, stop) {
		t.Errorf("err %v, want %v", err, stop)
	}
}

func TestSessionApprovalsPersist(t *testing.T) {
	tool := New(Options{Sandbox: testSandbox(t)})
	tool.Restore([]string{"make test", "go vet ./..."})
	if got := strings.Join(tool.Approved(), "|"); got != "go vet ./...|make test" {
		t.Errorf("Approved() = %q", got)
	}
}

func yolo(t *testing.T, o Options) *Tool {
	t.Helper()
	o.Yolo = true
	if o.BaseDir == "" {
		o.BaseDir = t.TempDir()
	}
	return New(o)
}

func TestRun(t *testing.T) {
	secrets := &prompt.Secrets{}
	secrets.Add("hunter2-very-secret")
	tests := []struct {
		name    string
		opts    Options
		args    map[string]any
		want    string // exact result, or a prefix/substring with wantSub
		wantSub bool
		isError bool
	}{
		{name: "output", args: map[string]any{"cmd": "echo hello"}, want: "hello\n"},
		{name: "no output", args: map[string]any{"cmd": "true"}, want: "(no output)"},
		{name: "merged in order", args: map[string]any{"cmd": "echo 1; echo 2 >&2; echo 3; echo 4 >&2"}, want: "1\n2\n3\n4\n"},
		{name: "exit status", args: map[string]any{"cmd": "echo out; exit 7"}, want: "out\n[exit status 7]", isError: true},
		{name: "exit status, no newline", args: map[string]any{"cmd": "printf out; exit 3"}, want: "out\n[exit status 3]", isError: true},
		{name: "signal", args: map[string]any{"cmd": "kill -9 $$"}, want: "[killed by signal SIGKILL]", isError: true},
		{name: "stdin is empty", args: map[string]any{"cmd": "cat; read x || echo eof"}, want: "eof\n"},
		{name: "env", opts: Options{Env: map[string]string{"GREETING": "hi there"}}, args: map[string]any{"cmd": `echo "$GREETING"`}, want: "hi there\n"},
		{name: "secret in env, masked in output", opts: Options{Secrets: secrets}, args: map[string]any{"cmd": `echo "got $HITL_SECRET_1"; test "$HITL_SECRET_1" = hunter2-very-secret && echo same`}, want: "got ***\nsame\n"},
		{name: "shell option", opts: Options{Shell: "bash"}, args: map[string]any{"cmd": `echo "${BASH_VERSION:+bash}"`}, want: "bash\n"},
		{name: "empty cmd", args: map[string]any{"cmd": "  "}, want: "cmd is empty", wantSub: true, isError: true},
		{name: "bad cwd", args: map[string]any{"cmd": "true", "cwd": "nope"}, want: "nope: no such file or directory", wantSub: true, isError: true},
		{name: "bad timeout", args: map[string]any{"cmd": "true", "timeout": -1}, want: "timeout must be a positive", wantSub: true, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(t, yolo(t, tt.opts), tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isError {
				t.Errorf("IsError %v, want %v (%q)", res.IsError, tt.isError, res.Text)
			}
			if tt.wantSub && !strings.Contains(res.Text, tt.want) || !tt.wantSub && res.Text != tt.want {
				t.Errorf("result %q, want %q", res.Text, tt.want)
			}
		})
	}
}

func TestWorkingDirPrecedence(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"ts", "ts/sub", "other"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	abs := t.TempDir()
	tests := []struct {
		opts Options
		cwd  string
		want string
	}{
		{Options{BaseDir: base}, "", base},
		{Options{BaseDir: base, WorkingDir: "ts"}, "", filepath.Join(base, "ts")},
		{Options{BaseDir: base, WorkingDir: "ts"}, "sub", filepath.Join(base, "ts/sub")},
		{Options{BaseDir: base, WorkingDir: abs}, "", abs},
		{Options{BaseDir: base, WorkingDir: "ts"}, abs, abs},
		{Options{BaseDir: base}, "other", filepath.Join(base, "other")},
	}
	for _, tt := range tests {
		res, err := call(t, yolo(t, tt.opts), map[string]any{"cmd": "pwd -P", "cwd": tt.cwd})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := filepath.EvalSymlinks(tt.want)
		if strings.TrimSpace(res.Text) != want {
			t.Errorf("%+v cwd %q: ran in %q, want %q", tt.opts, tt.cwd, res.Text, want)
		}
	}
	wd, _ := os.Getwd()
	res, _ := call(t, New(Options{Sandbox: testSandbox(t), Yolo: true}), map[string]any{"cmd": "pwd -P"})
	if want, _ := filepath.EvalSymlinks(wd); strings.TrimSpace(res.Text) != want {
		t.Errorf("no dirs: ran in %q, want %q", res.Text, want)
	}
}

// gone reports whether pid has exited (a zombie counts: nothing runs).
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(data), ')')
	return i > 0 && len(data) > i+2 && (data[i+2] == 'Z' || data[i+2] == 'X')
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	tool := yolo(t, Options{BaseDir: dir, Grace: 300 * time.Millisecond})
	// The grandchild ignores SIGTERM, so only the SIGKILL after the grace
	// ends it; it also holds the output pipe.
	start := time.Now()
	res, err := call(t, tool, map[string]any{
		"cmd":     `sh -c 'trap "" TERM; echo $$ > bg.pid; sleep 60' & echo started; sleep 60`,
		"timeout": 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	if !res.IsError || !strings.Contains(res.Text, "started\n") || !strings.Contains(res.Text, "[timed out after 1s") {
		t.Errorf("result %q", res.Text)
	}
	if pid := readPid(t, filepath.Join(dir, "bg.pid")); !gone(pid) {
		t.Errorf("background grandchild %d still running", pid)
	}
}

func TestLeftoversAreStopped(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	tool := yolo(t, Options{BaseDir: dir, Grace: 300 * time.Millisecond})
	start := time.Now()
	res, err := call(t, tool, map[string]any{"cmd": `sleep 60 > /dev/null 2>&1 & echo $! > bg.pid; echo done`})
	if err != nil || res.Text != "done\n" {
		t.Fatalf("%q %v", res.Text, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
	if pid := readPid(t, filepath.Join(dir, "bg.pid")); !gone(pid) {
		t.Errorf("background child %d still running", pid)
	}
}

func TestCancelStopsTheRun(t *testing.T) {
	dir := t.TempDir()
	tool := yolo(t, Options{BaseDir: dir, Grace: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := tool.Call(ctx, exec.ToolCall{ID: "c", Name: Name, Arguments: json.RawMessage(`{"cmd":"sleep 60 & echo $! > bg.pid; sleep 60"}`)})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
	if _, statErr := os.Stat("/proc/self/stat"); statErr == nil {
		if pid := readPid(t, filepath.Join(dir, "bg.pid")); !gone(pid) {
			t.Errorf("background child %d still running", pid)
		}
	}
}

func TestOutputCap(t *testing.T) {
	res, err := call(t, yolo(t, Options{}), map[string]any{"cmd": `i=0; while [ $i -lt 5000 ]; do echo "line $i"; i=$((i+1)); done`})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "line 0\nline 1\n") || !strings.HasSuffix(res.Text, "line 4999\n") {
		t.Errorf("head or tail missing: %q ... %q", res.Text[:40], res.Text[len(res.Text)-40:])
	}
	if !strings.Contains(res.Text, "characters cut: the output had 48890 characters") {
		t.Errorf("no marker in %d characters", len(res.Text))
	}
	if n := len([]rune(res.Text)); n > MaxOutput+200 {
		t.Errorf("result has %d characters", n)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := yolo(t, Options{}).Call(ctx, exec.ToolCall{ID: "c", Name: Name, Arguments: json.RawMessage(`{"cmd":"touch made"}`)})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

// TestLongLineRefused: a line longer than MaxLine is refused before it is
// parsed or shown (DESIGN §1.10: bounded), unasked, allowed or not: parsing
// a 16 MiB line of short words took gigabytes, and no shell could take it
// (sh -c LINE fails past 128 KiB on Linux). A line of MaxLine bytes runs.
func TestLongLineRefused(t *testing.T) {
	long := "echo " + strings.Repeat("a ", MaxLine/2)
	tests := []struct {
		name  string
		cmd   string
		yolo  bool
		allow []string
		want  string
		asked bool
	}{
		{name: "allowed unasked", cmd: long, allow: []string{"shell:cmd=echo*"}, want: fmt.Sprintf("the command line is %d bytes long; at most %d", len(long), MaxLine)},
		{name: "yolo", cmd: long, yolo: true, want: "at most"},
		{name: "needs a person", cmd: long, want: "at most"},
		{name: "at the bound", cmd: long[:MaxLine], allow: []string{"shell:cmd=echo*"}, want: "a a a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asker := &fakeAsker{}
			tool := New(Options{Sandbox: testSandbox(t), Asker: asker, Yolo: tt.yolo, Permissions: checker(t, tt.allow, nil, nil)})
			res, err := call(t, tool, map[string]any{"cmd": tt.cmd})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text, tt.want) {
				t.Errorf("result %.200q, want it to say %q", res.Text, tt.want)
			}
			if len(asker.questions) > 0 {
				t.Errorf("asked %d questions, want none", len(asker.questions))
			}
		})
	}
}

// TestSessionApprovalIsForItsDir: an approval "for the session" is for the
// line in the directory the question showed ("in DIR"): the same line in
// another cwd is asked again, since a relative command means something else
// there. A line holding a NUL byte, which no shell can take, is refused.
func TestSessionApprovalIsForItsDir(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	asker := &fakeAsker{answers: []prompt.Answer{choose("session"), choose("no")}}
	var journal []string
	tool := New(Options{Sandbox: testSandbox(t), BaseDir: base, Asker: asker, OnApprove: func(k string) { journal = append(journal, k) }})
	steps := []struct {
		cwd       string
		wantAsked int
		wantRun   bool
	}{
		{cwd: "a", wantAsked: 1, wantRun: true},
		{cwd: "a", wantAsked: 1, wantRun: true},  // approved for the session in a
		{cwd: "b", wantAsked: 2, wantRun: false}, // asked again in b, and refused
		{cwd: "", wantAsked: 3, wantRun: false},  // nobody left to ask
	}
	for i, s := range steps {
		res, err := call(t, tool, map[string]any{"cmd": "touch made", "cwd": s.cwd})
		if err != nil {
			t.Fatal(err)
		}
		if len(asker.questions) != s.wantAsked {
			t.Errorf("step %d (cwd %q): %d questions asked, want %d", i, s.cwd, len(asker.questions), s.wantAsked)
		}
		dir := filepath.Join(base, s.cwd)
		_, statErr := os.Stat(filepath.Join(dir, "made"))
		if ran := statErr == nil; ran != s.wantRun {
			t.Errorf("step %d (cwd %q): ran = %v, want %v (%s)", i, s.cwd, ran, s.wantRun, res.Text)
		}
	}
	// The journal's keys restore the same approvals, and only those.
	resumed := New(Options{Sandbox: testSandbox(t), BaseDir: base, Asker: &fakeAsker{}})
	resumed.Restore(journal)
	for _, s := range []struct {
		cwd  string
		want bool
	}{{"a", true}, {"b", false}, {"", false}} {
		os.Remove(filepath.Join(base, s.cwd, "made"))
		_, _ = call(t, resumed, map[string]any{"cmd": "touch made", "cwd": s.cwd})
		if _, err := os.Stat(filepath.Join(base, s.cwd, "made")); (err == nil) != s.want {
			t.Errorf("resumed, cwd %q: ran = %v, want %v", s.cwd, err == nil, s.want)
		}
	}

	res, err := call(t, New(Options{Sandbox: testSandbox(t), Yolo: true}), map[string]any{"cmd": "echo a\x00b"})
	if err != nil || !res.IsError || !strings.Contains(res.Text, "NUL") {
		t.Errorf("a line with a NUL byte: %+v, %v; want an error result naming the NUL byte", res, err)
	}
}

// testSandbox is the sandbox the machine has (bwrap, else Landlock), as a
// run chooses it; its state dir is the test's own.
func testSandbox(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(sandbox.Auto, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	if !sb.AllowRulesApply() {
		t.Skipf("no sandbox on this machine: %s", sb.Why)
	}
	return sb
}
