//go:build unix

package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/permissions"
)

// The differential fuzz test of the permission checker against the real
// shells (DESIGN §1 principle 8, §7). A line comes from a grammar of shell
// features (or, for the seeds of known attacks, as written). For each
// dialect (/bin/sh when it is dash, and bash) a line the checker allows
// without asking under fuzzAllow is run twice, in a scratch directory whose
// PATH holds only shims that log each program run with its argv:
//
//   - through hitl's execution path (Tool.Call: the interpreter, from the
//     checked tree, with its recheck);
//   - by the real shell (SHELL -c LINE), as the checker's reading of the
//     line must match the shell's.
//
// Both times only allowed programs may run, each with an argv the checker
// saw (one of its simple commands, its words or their brace expansion, or
// the expansion of its globs), and no file may appear in the scratch
// directory.
//
// Run it longer with
//
//	go test -run='^$' -fuzz=FuzzShellAllowDifferential -fuzztime=10m ./exec/tools/shell/

var fuzzAllow = []string{"shell:cmd=echo*", "shell:cmd=git status*", "shell:cmd=ls*"}

// fuzzTokens is the grammar: each input byte picks one (a byte of 128 or
// more joins it to the previous token without a space).
var fuzzTokens = []string{
	// commands
	"echo", "echo", "ls", "ls -la", "git status", "git status --short", "git", "status", "head -1",
	"touch x", "rm -f y", "sh -c", "bash -c", "eval", "env sh", "xargs sh", "find . -exec sh -c", "printenv",
	"/bin/touch z", "command", "exec", "cat", "tee w", ".", "source", "time", "!", "nohup",
	// words and quoting
	"hi", "x", "-n", "'a b'", `"a b"`, `"$x"`, "$'a\\nb'", `$"a"`, `\`, `\x`, `'`, `"`, "''", `""`,
	"a'b'c", `"'"`, "\\'", "\\\"",
	// expansions
	"$x", "${x}", "${x:-touch}", "$(touch c)", "`touch d`", "$((1+2))", "<(touch e)", ">(touch f)", "$1", "$@", "$$",
	"$HITL_SECRET_1", "HITL_SECRET_1", "${HITL_SECRET_1}",
	// braces, globs, tilde
	"{a,b}", "{1..3}", "--{output=g,stat}", "{touch,h}", "{", "}", "*", "?", "[ab]", "~", "~/x", "*(a)", "@(a|b)",
	// separators
	";", "&&", "||", "|", "&", "\n", "|&", ";;", "(", ")", "{ ", " }",
	// comments and continuations
	"#", "# c", "#\\", "\\\n", "\\\r\n",
	// redirections
	">", ">>", "<", "&>", ">&", "<>", ">|", "<<<", "&>>", "2>", "2>&1", ">&2", "<&0", ">&0", "3>", "3>&1", "{fd}>",
	"/dev/null", ">/dev/null", "</dev/null", "/dev/tcp/127.0.0.1/9", "</dev/tcp/127.0.0.1/9", "x",
	// here-documents
	"<<EOF\nhi\nEOF\n", "<<-EOF\n\thi\n\tEOF\n", "<<'EOF'\ntouch i\nEOF\n", "<<EOF\n$(touch j)\nEOF\n", "<<EOF", "EOF",
	// control, format and non-ASCII separator characters
	"\r", "\x1b", "\x00", "\t", "\v", "\f", "\u0085", "\u00a0", "\u2028", "\u2029", "\u202e", "\u200b", "\ufeff", "\xff",
}

// fuzzLine turns an input into a line: byte 0 first means the rest is the
// line as written (the seeds of known attacks); otherwise each byte picks a
// token of the grammar.
func fuzzLine(data []byte) string {
	if len(data) > 0 && data[0] == 0 {
		return string(data[1:])
	}
	if len(data) > 48 {
		data = data[:48]
	}
	var b strings.Builder
	for i, c := range data {
		if i > 0 && c < 128 {
			b.WriteByte(' ')
		}
		b.WriteString(fuzzTokens[int(c&127)%len(fuzzTokens)])
	}
	return b.String()
}

// fuzzAttacks are the known attack lines (issue 10 and before), as seeds.
var fuzzAttacks = []string{
	"echo hi &>/dev/null touch x",
	"git log &>/dev/null touch x",
	"echo hi # c\\\ntouch x",
	"echo $HITL_SECRET_1 </dev/tcp/127.0.0.1/9 >&0",
	"git status --{output=x,short}",
	"ls --{output=x,l}",
	"echo hi; touch x",
	"echo $(touch x)",
	"echo `touch x`",
	"echo hi > x",
	"X=1 echo hi",
	"echo hi | sh -c 'touch x'",
	"echo hi\rtouch x",
	"echo hi\u2028touch x",
	"echo <<$\"EOF\" hi\n$EOF\ntouch x\nEOF\n",
	"echo $'\\'; touch x; #'",
	"echo <<EOF hi\n\\\nEOF\ntouch x\nEOF\n",
	"echo hi >& x",
	"echo hi {fd}>x",
	"echo hi <> x",
	"ls *(e:'touch x':)",
	"echo hi & touch x",
	"ls | xargs touch",
	"ls -la | head -1",
	"git status",
	"echo hello",
	"ls ~ * ? [ab] 2>/dev/null",
	"echo a && ls || git status; echo b",
	"(echo a; ls) | ls",
	"{ echo a; }",
	"echo\u00a0hi",
	"echo hi \\\n; touch x",
	"ls -exec touch x \\;",
	"command touch x",
	"exec touch x",
	"echo hi |& touch x",
}

func FuzzShellAllowDifferential(f *testing.F) {
	for _, a := range fuzzAttacks {
		f.Add(append([]byte{0}, a...))
	}
	for _, s := range []string{"\x01\x02", "\x02\x01\x1d\x03", "\x03\x4c\x02", "\x00"} {
		f.Add([]byte(s))
	}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		line := fuzzLine(data)
		for _, sh := range env.shells {
			env.check(t, sh, line)
		}
	})
}

type fuzzShell struct {
	path    string
	dialect permissions.Dialect
}

type fuzzEnv struct {
	checker *permissions.Checker
	shims   string // the PATH
	home    string
	shells  []fuzzShell
}

// fuzzShims are the programs on the scratch PATH: each logs its name and
// argv, and does nothing else.
var fuzzShims = []string{
	"echo", "git", "ls", "head", "touch", "rm", "cat", "sh", "bash", "dash", "env", "xargs", "find", "printenv",
	"curl", "nc", "tee", "cp", "mv", "mkdir", "id", "true", "false", "printf", "sleep", "wc", "grep", "sed", "awk",
	"status", "hi", "x", "nohup", "time", "a", "b", "c",
}

var fuzzEnvOnce struct {
	sync.Once
	env *fuzzEnv
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	fuzzEnvOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hitl-fuzz-")
		if err != nil {
			f.Fatal(err)
		}
		e := &fuzzEnv{shims: filepath.Join(dir, "bin"), home: filepath.Join(dir, "home")}
		for _, d := range []string{e.shims, e.home} {
			if err := os.Mkdir(d, 0o755); err != nil {
				f.Fatal(err)
			}
		}
		// One write per record (O_APPEND): programs of a pipeline log at
		// the same time.
		shim := "#!/bin/sh\nprintf '%s\\0' \"${0##*/}\" \"$@\" \"$(printf '\\036')\" >>\"$SHIMLOG\"\n"
		for _, name := range fuzzShims {
			if err := os.WriteFile(filepath.Join(e.shims, name), []byte(shim), 0o755); err != nil {
				f.Fatal(err)
			}
		}
		if e.checker, err = permissions.New(fuzzAllow, nil, nil); err != nil {
			f.Fatal(err)
		}
		if DialectOf("/bin/sh") == permissions.DialectPOSIX {
			e.shells = append(e.shells, fuzzShell{"/bin/sh", permissions.DialectPOSIX})
		}
		if p, err := osexec.LookPath("bash"); err == nil && DialectOf(p) == permissions.DialectBash {
			e.shells = append(e.shells, fuzzShell{p, permissions.DialectBash})
		}
		fuzzEnvOnce.env = e
	})
	if len(fuzzEnvOnce.env.shells) == 0 {
		f.Skip("neither dash as /bin/sh nor bash is installed")
	}
	return fuzzEnvOnce.env
}

// check runs line under sh when the checker allows it without asking.
func (e *fuzzEnv) check(t *testing.T, sh fuzzShell, line string) {
	args := map[string]any{"cmd": line}
	v := e.checker.Shell(Name, line, args, sh.dialect)
	if v.Program == nil {
		if v.Decision == permissions.Allow {
			t.Fatalf("%s: %q allowed without a checked program: %+v", sh.dialect, line, v)
		}
		return
	}
	a := permissions.AnalyzeIn(line, sh.dialect)

	// hitl's execution path.
	scratch, log := e.scratch(t)
	tool := New(Options{Sandbox: testSandbox(t),
		Shell: sh.path, BaseDir: scratch, Timeout: 5 * time.Second, Grace: 100 * time.Millisecond,
		Env:         map[string]string{"PATH": e.shims, "SHIMLOG": log, "HOME": e.home},
		Permissions: e.checker,
	})
	data, _ := json.Marshal(args)
	res, err := tool.Call(context.Background(), exec.ToolCall{ID: "f", Name: Name, Arguments: data})
	if err != nil {
		t.Fatalf("%s: %q: %v", sh.dialect, line, err)
	}
	e.verify(t, "hitl", sh, line, a, scratch, log, res.Text)

	// The real shell, reading the line itself.
	scratch, log = e.scratch(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, sh.path, "-c", line)
	cmd.Dir = scratch
	cmd.Env = []string{"PATH=" + e.shims, "SHIMLOG=" + log, "HOME=" + e.home}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, _ := cmd.CombinedOutput()
	e.verify(t, sh.path, sh, line, a, scratch, log, string(out))
}

func (e *fuzzEnv) scratch(t *testing.T) (dir, log string) {
	base := t.TempDir()
	dir = filepath.Join(base, "scratch")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(base, "shim.log")
}

// verify: only allowed programs ran, each with an argv the checker saw, and
// no file appeared.
func (e *fuzzEnv) verify(t *testing.T, runner string, sh fuzzShell, line string, a *permissions.Analysis, scratch, log, out string) {
	t.Helper()
	if entries, _ := os.ReadDir(scratch); len(entries) > 0 {
		names := make([]string, len(entries))
		for i, en := range entries {
			names[i] = en.Name()
		}
		t.Errorf("%s (%s): %q made files %q (output %q)", runner, sh.dialect, line, names, out)
	}
	data, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, rec := range bytes.Split(data, []byte("\x1e\x00")) {
		if len(rec) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimSuffix(string(rec), "\x00"), "\x00")
		if err := e.checker.Recheck(Name, argv, map[string]any{"cmd": line}); err != nil {
			t.Errorf("%s (%s): %q ran %q, which no rule allows: %v", runner, sh.dialect, line, argv, err)
			continue
		}
		if !checkedArgv(a, argv) {
			t.Errorf("%s (%s): %q ran %q, not a command the checker saw (%+v)", runner, sh.dialect, line, argv, a.Commands)
		}
	}
}

// checkedArgv reports whether argv is one of the analysed commands: its
// words or a brace expansion of them, or, for words with a glob or ~, the
// same command name.
func checkedArgv(a *permissions.Analysis, argv []string) bool {
	for _, c := range a.Commands {
		for _, w := range [][]string{c.Words, c.Braces} {
			if len(w) == 0 || filepath.Base(w[0]) != argv[0] {
				continue
			}
			if strings.Join(w[1:], "\x00") == strings.Join(argv[1:], "\x00") {
				return true
			}
			if strings.ContainsAny(strings.Join(w, ""), "*?[~") {
				return true
			}
		}
	}
	return false
}
