package permissions

import (
	"strings"
	"testing"
)

// TestShellDialects: a line is judged as the shell that runs it reads it,
// and only lines meeting every condition of DESIGN §7 are allowed unasked.
func TestShellDialects(t *testing.T) {
	c, err := New(
		[]string{"shell:cmd=echo*", "shell:cmd=git status*", "shell:cmd=git log*", "shell:cmd=ls*", "shell:cmd=head*"},
		nil,
		[]string{"shell:cmd=git *--output*"},
	)
	if err != nil {
		t.Fatal(err)
	}
	both := []Dialect{DialectPOSIX, DialectBash}
	tests := []struct {
		line     string
		dialects []Dialect
		want     Decision
		reason   string
	}{
		// legitimate lines
		{"echo hello", both, Allow, ""},
		{"git status", both, Allow, ""},
		{"ls -la | head -1", both, Allow, ""},
		{"ls *.go ~ 2>/dev/null", both, Allow, ""},
		{"echo a && echo b || echo c; echo d", both, Allow, ""},
		{"echo hi >&2 2>&1 </dev/null", both, Allow, ""},
		{"echo 'a b' \"c d\" e\\ f", both, Allow, ""},
		{"git log --{oneline,stat}", []Dialect{DialectBash}, Allow, ""},
		{"echo hi &>/dev/null", []Dialect{DialectBash}, Allow, ""},
		// the cases
		{"echo hi &>/dev/null touch x", []Dialect{DialectPOSIX}, None, "does not parse"},
		{"echo hi &>/dev/null touch x", []Dialect{DialectBash}, Allow, ""}, // bash: one echo command
		{"echo hi # c\\\ntouch x", both, None, "control"},
		{"echo hi # c\\", both, None, "comment"},
		{"echo hi #", both, None, "comment"},
		{"echo $HITL_SECRET_1 </dev/tcp/127.0.0.1/9 >&0", both, None, "never allowed"},
		{"echo HITL_SECRET_1", both, None, "secret placeholder"},
		{"echo hi </dev/tcp/127.0.0.1/9", both, None, "redirects to or from a file"},
		{"echo hi >/dev/udp/127.0.0.1/9", both, None, "redirects to or from a file"},
		{"git log --{output=x,stat}", both, Deny, "git *--output*"},
		{"git log --outp{ut=x,}", both, Deny, "git *--output*"},
		{"git log --{oneline,stat}", []Dialect{DialectPOSIX}, None, "brace expansion"},
		{"git status-{a}b=x,short}", []Dialect{DialectBash}, None, "braces that bash may expand otherwise"},
		{"ls {}", []Dialect{DialectBash}, None, "braces"},
		{"echo |& time", []Dialect{DialectBash}, None, "time keyword"},
		{"time ls", []Dialect{DialectBash}, None, "time keyword"},
		{"time ls", []Dialect{DialectPOSIX}, None, `"time ls" matches no allow rule`}, // dash runs the program time
		{">/dev/null", both, None, "no command"},
		{"ls {a,{b}}", []Dialect{DialectBash}, None, "braces"},
		{"ls {a,b}{c,d} '{'", []Dialect{DialectBash}, Allow, ""},
		{"git status-{a}b=x,short}", []Dialect{DialectPOSIX}, None, "brace"},
		// conditions of DESIGN §7
		{"echo $x", both, None, "parameter expansion"},
		{"echo ${x}", both, None, "parameter expansion"},
		{"echo $(ls)", both, None, "command substitution"},
		{"echo `ls`", both, None, "command substitution"},
		{"echo $((1))", both, None, "arithmetic"},
		{"echo <(ls)", []Dialect{DialectBash}, None, "process substitution"},
		{"X=1 echo", both, None, "assigns a variable"},
		{"echo &", both, None, "background"},
		{"echo <<EOF\nx\nEOF", both, None, "never allowed"},
		{"echo <<<x", []Dialect{DialectBash}, None, "here-string"},
		{"echo <<<x", []Dialect{DialectPOSIX}, None, "does not parse"},
		{"echo >x", both, None, "redirects"},
		{"echo 3>/dev/null", both, None, "redirects"},
		{"echo >&3", both, None, "redirects"},
		{"echo <>/dev/null", both, Allow, ""},
		{"echo \\\nhi", both, None, "never allowed"},
		{"echo a\rtouch x", both, None, `\r`},
		{"echo a\x1b[2J", both, None, `\x1b`},
		{"echo a\x00", both, None, `\x00`},
		{"echo a\u2028touch x", both, None, `\u2028`},
		{"echo a\u202e", both, None, `\u202e`},
		{"echo a\u0085", both, None, `\u0085`},
		{"echo a\ttab", both, None, `\t`},
		{"echo \xff", both, None, "invalid UTF-8"},
		{"echo hi | sh", both, None, "nested shell"},
		{"ls | xargs sh", both, None, "nested shell"},
		{"ls -exec sh -c x", both, Allow, ""}, // not find: an option of ls
		{"echo x | env sh", both, None, "nested shell"},
		{"ls; eval ls", both, None, "eval"},
		{"/bin/ec?o hi", both, None, "not a plain word"},
		{"~/echo hi", both, None, "not a plain word"},
		{"echo $'a'", []Dialect{DialectBash}, None, "$'...'"},
		{"echo hi", []Dialect{DialectUnknown}, None, "only dash and bash"},
	}
	for _, tt := range tests {
		for _, d := range tt.dialects {
			v := c.Shell("shell", tt.line, map[string]any{"cmd": tt.line}, d)
			if v.Decision != tt.want {
				t.Errorf("%s: %q: decision %s (rule %q, reason %q), want %s", d, tt.line, v.Decision, v.Rule, v.Reason, tt.want)
				continue
			}
			got := v.Reason
			if tt.want == Deny || tt.want == Ask {
				got = v.Rule
			}
			if !strings.Contains(got, tt.reason) {
				t.Errorf("%s: %q: %s %q, want it to contain %q", d, tt.line, tt.want, got, tt.reason)
			}
			if (v.Program != nil) != (tt.want == Allow) {
				t.Errorf("%s: %q: Program %v with decision %s", d, tt.line, v.Program != nil, v.Decision)
			}
		}
	}
}

// TestShellBareAllowRunsAsWritten: a bare rule allows any line, without a
// checked program (it runs in the toolset's shell, as a person approved).
func TestShellBareAllowRunsAsWritten(t *testing.T) {
	c, _ := New([]string{"shell"}, nil, nil)
	v := c.Shell("shell", "echo $HITL_SECRET_1 > x", nil, DialectPOSIX)
	if v.Decision != Allow || v.Program != nil || v.Rule != "shell" {
		t.Errorf("%+v", v)
	}
}

// TestRecheck: the final argument list of each command, after expansion.
func TestRecheck(t *testing.T) {
	c, err := New([]string{"shell:cmd=echo*", "shell:cmd=ls*", "shell:cmd=git log*"}, []string{"shell:cmd=ls -R*"}, []string{"shell:cmd=git *--output*"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		argv []string
		want string // "" when it may run
	}{
		{[]string{"echo", "hi"}, ""},
		{[]string{"ls", "a b"}, ""},
		{[]string{"git", "log", "--output=x"}, "denied"},
		{[]string{"/usr/bin/git", "log", "--output=x"}, "denied"},
		{[]string{"ls", "-R", "/"}, "asked every time"},
		{[]string{"touch", "x"}, "matches no allow rule"},
		{[]string{"echo", "HITL_SECRET_1"}, "secret"},
		{[]string{"ls", "|", "sh"}, ""}, // argv, not shell text
	}
	for _, tt := range tests {
		err := c.Recheck("shell", tt.argv, nil)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.argv, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: %v, want %q", tt.argv, err, tt.want)
		}
	}
	c2, _ := New([]string{"shell:cmd=*"}, nil, nil)
	if err := c2.Recheck("shell", []string{"sh", "-c", "touch x"}, nil); err == nil || !strings.Contains(err.Error(), "nested shell") {
		t.Errorf("nested shell after expansion: %v", err)
	}
	var none *Checker
	if err := none.Recheck("shell", []string{"echo"}, nil); err == nil {
		t.Error("nil checker allowed a command")
	}
}
