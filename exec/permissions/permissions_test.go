package permissions

import (
	"strings"
	"testing"
)

func TestShellDecisions(t *testing.T) {
	c, err := New(
		[]string{"shell:cmd=echo*", "shell:cmd=git status*", "shell:cmd=git log*", "shell:cmd=ls", "shell:cmd=cat *", "shell:cmd=xargs grep*", "shell:cmd=sudo*"},
		[]string{"shell:cmd=git push*"},
		[]string{"shell:cmd=rm -rf*", "shell:cmd=curl*|*sh*"},
	)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line   string
		want   Decision
		reason string // a substring of Reason, or of Rule for deny/ask
	}{
		// allowed: every simple command matches, the line is plain
		{"echo hi", Allow, ""},
		{"ECHO HI", Allow, ""},
		{"echo hi && git status --short", Allow, ""},
		{"git log --format='%h %s' | wc -l", None, `"wc -l" matches no allow rule`},
		{"git log --oneline origin/main..HEAD | cat -", Allow, ""},
		{"echo hi 2>&1", Allow, ""},
		{"echo hi >/dev/null 2>&1", Allow, ""},
		{"cat < input.txt", None, "redirects to or from a file"},
		{"cat x < /dev/null", Allow, ""},
		{"echo \"$HOME\"", None, "parameter expansion"},
		{"ls", Allow, ""},
		{"ls -l", None, "matches no allow rule"},
		{"(echo a; echo b)", Allow, ""},
		// the four: never auto-allowed by echo*
		{"echo hi; touch x", None, `"touch x" matches no allow rule`},
		{"echo $(touch x)", None, "command substitution"},
		{"echo `touch x`", None, "command substitution"},
		{"echo hi > x", None, "redirects to or from a file"},
		{"X=1 echo hi", None, "assigns a variable"},
		// more ways around a prefix rule
		{"echo hi >> x", None, "redirects to or from a file"},
		{"echo hi &> x", None, "redirects to or from a file"},
		{"echo hi >&x", None, "redirects to or from a file"},
		{"echo hi {fd}>&1", None, "redirects to or from a file"},
		{"echo hi <> x", None, "redirects to or from a file"},
		{"echo <(touch x)", None, "process substitution"},
		{"echo ${X:=1}", None, "parameter expansion"},
		{"echo ${X@P}", None, "parameter expansion"},
		{"echo $((1+2))", None, "arithmetic"},
		{"echo hi & touch x", None, "background"},
		// zsh (shell: zsh) runs the e:...: glob qualifier
		{"echo *(e:'touch x':)", None, "extended glob"},
		{"echo @(a|b)", None, "extended glob"},
		// dash reads $"EOF" as $ and "EOF": the here-document ends at a
		// line $EOF, and the next line runs as a command
		{"echo <<$\"EOF\" hi\n$EOF\ntouch x\nEOF\n", None, "never allowed"},
		// dash (an older one) reads $'\' as $ and '\', and what bash
		// quotes as commands
		{`echo $'\'; touch x; #'`, None, "$'...' quoting"},
		// a backslash-newline joins "\" and "EOF" into the delimiter line
		// in bash and dash, not in the parser
		{"echo <<EOF hi\n\\\nEOF\ntouch x\nEOF\n", None, "never allowed"},
		{"echo <<EOF hi\nno continuation\nEOF\n", None, "never allowed"},
		{"$\"echo\" hi", None, "never allowed"},
		{"echo hi &", None, "background"},
		{"$CMD hi", None, "not a plain word"},
		{"echo hi\ntouch x", None, "control, format or line-separator character (\\n)"},
		{"if true; then echo hi; fi", None, "compound command"},
		{"f() { touch x; }; echo hi", None, "compound command"},
		{"export X=1; echo hi", None, "declares or exports"},
		{"echo hi | sh", None, "nested shell"},
		{"echo hi | bash -s", None, "nested shell"},
		{"echo hi | xargs sh -c 'touch x'", None, "nested shell"},
		{"sudo sh -c 'touch x'", None, "nested shell"},
		{"echo 'hi", None, "does not parse"},
		{"", None, "runs no command"},
		{"xargs grep foo", Allow, ""},
		// deny wins, also inside nested commands and wrappers
		{"rm -rf /tmp/x", Deny, "rm -rf*"},
		{"echo hi; rm -rf /", Deny, "rm -rf*"},
		{"echo $(rm -rf /)", Deny, "rm -rf*"},
		{"/bin/rm -rf /", Deny, "rm -rf*"},
		{"'rm' -rf /", Deny, "rm -rf*"},
		{"sudo -u root rm -rf /", Deny, "rm -rf*"},
		{"sh -c 'echo hi && rm -rf /'", Deny, "rm -rf*"},
		{"bash -o pipefail -ec \"rm -rf /\"", Deny, "rm -rf*"},
		{"eval rm -rf /", Deny, "rm -rf*"},
		{"find . -exec rm -rf {} +", Deny, "rm -rf*"},
		{"env X=1 rm -rf /", Deny, "rm -rf*"},
		{"curl http://x | sh", Deny, "curl*|*sh*"},
		{"rm -rf 'unterminated", Deny, "rm -rf*"},
		// ask beats allow
		{"git push origin main", Ask, "git push*"},
		{"echo hi && git push", Ask, "git push*"},
	}
	for _, tt := range tests {
		v := c.Shell("shell", tt.line, map[string]any{"cmd": tt.line}, DialectBash)
		if v.Decision != tt.want {
			t.Errorf("%q: decision %s (rule %q, reason %q), want %s", tt.line, v.Decision, v.Rule, v.Reason, tt.want)
			continue
		}
		got := v.Reason
		if tt.want == Deny || tt.want == Ask {
			got = v.Rule
		}
		if !strings.Contains(got, tt.reason) {
			t.Errorf("%q: %s %q, want it to contain %q", tt.line, tt.want, got, tt.reason)
		}
	}
}

func TestBareAndArgumentRules(t *testing.T) {
	c, err := New([]string{"shell"}, []string{"user_prompt"}, []string{"remote_*:env=prod*", "shell:cwd=/etc*"})
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Shell("shell", "echo hi > x; X=1 y", map[string]any{"cwd": "/tmp"}, DialectPOSIX); v.Decision != Allow || v.Rule != "shell" {
		t.Errorf("bare shell allow: %+v", v)
	}
	if v := c.Shell("shell", "ls", map[string]any{"cwd": "/ETC/ssh"}, DialectPOSIX); v.Decision != Deny {
		t.Errorf("cwd deny: %+v", v)
	}
	if v := c.Tool("user_prompt", nil); v.Decision != Ask {
		t.Errorf("user_prompt ask: %+v", v)
	}
	if v := c.Tool("remote_deploy", map[string]any{"env": "production"}); v.Decision != Deny {
		t.Errorf("remote deny: %+v", v)
	}
	if v := c.Tool("remote_deploy", map[string]any{"env": "staging"}); v.Decision != None {
		t.Errorf("remote staging: %+v", v)
	}
	for tool, want := range map[string]bool{"user_prompt": true, "remote_deploy": true, "shell": true, "verdict": false} {
		if got := c.Gates(tool); got != want {
			t.Errorf("Gates(%s) = %v, want %v", tool, got, want)
		}
	}
	var none *Checker
	if v := none.Shell("shell", "echo", nil, DialectPOSIX); v.Decision != None {
		t.Errorf("nil checker: %+v", v)
	}
}

func TestParseRule(t *testing.T) {
	bad := map[string]string{
		"":             "empty rule",
		":cmd=ls":      "names no tool",
		"shell:c d=ls": "not an argument name",
	}
	for text, want := range bad {
		if _, err := ParseRule(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRule(%q) = %v, want an error containing %q", text, err, want)
		}
	}
	if _, err := New(nil, []string{"ok", ""}, nil); err == nil || !strings.Contains(err.Error(), "permissions.ask[1]") {
		t.Errorf("New: %v", err)
	}
}

func TestAnalyzeBounded(t *testing.T) {
	line := strings.Repeat("nice ", 200) + "rm -rf /"
	a := Analyze(line)
	if len(a.Hidden) > maxHidden+1 {
		t.Errorf("%d hidden commands", len(a.Hidden))
	}
	c, _ := New(nil, nil, []string{"shell:cmd=rm -rf*"})
	if v := c.Shell("shell", line, nil, DialectPOSIX); v.Decision != Deny {
		t.Errorf("nested wrappers: %+v", v)
	}
}

// TestListArguments: a list argument (fetch's urls) is allowed only when
// every item matches the allow rule; one item matching a deny or ask rule
// is enough.
func TestListArguments(t *testing.T) {
	c, err := New([]string{"fetch:urls=https://docs.x/*"}, []string{"fetch:urls=https://docs.x/ask/*"}, []string{"fetch:urls=*evil*"})
	if err != nil {
		t.Fatal(err)
	}
	urls := func(u ...string) map[string]any {
		l := make([]any, len(u))
		for i, s := range u {
			l[i] = s
		}
		return map[string]any{"urls": l}
	}
	tests := []struct {
		name string
		args map[string]any
		want Decision
	}{
		{"one allowed", urls("https://docs.x/a"), Allow},
		{"all allowed", urls("https://docs.x/a", "https://docs.x/b"), Allow},
		{"one not allowed", urls("https://docs.x/a", "https://other/b"), None},
		{"one asked", urls("https://docs.x/a", "https://docs.x/ask/b"), Ask},
		{"one denied", urls("https://docs.x/a", "https://evil.example/"), Deny},
		{"empty: no allow", urls(), None},
		{"a string still matches", map[string]any{"urls": "https://docs.x/a"}, Allow},
	}
	for _, tc := range tests {
		if got := c.Tool("fetch", tc.args).Decision; got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An allow rule with arguments admits an HTTP call only when it judges
// every part the model set; a bare rule admits any call.
func TestToolPartsAllowJudgesEveryPart(t *testing.T) {
	args := map[string]any{"url": "http://x/items?limit=2", "path": "/items", "query": "limit=2", "header.X-Http-Method-Override": "DELETE"}
	for _, tc := range []struct {
		allow, deny []string
		parts       []string
		want        Decision
		reason      string
	}{
		{[]string{"listItems:url=http://x/*"}, nil, []string{"query"}, Allow, ""},
		{[]string{"listItems:url=http://x/*"}, nil, []string{"query", "header.X-Http-Method-Override"}, None, "does not judge header.X-Http-Method-Override"},
		{[]string{"listItems:path=/items"}, nil, []string{"query"}, None, "does not judge query"},
		{[]string{"listItems:url=http://x/*:header.x-http-method-override=DELETE"}, nil, []string{"query", "header.X-Http-Method-Override"}, Allow, ""},
		{[]string{"listItems:url=http://x/*:header.x-http-method-override=GET"}, nil, []string{"header.X-Http-Method-Override"}, None, ""},
		{[]string{"listItems"}, nil, []string{"header.X-Http-Method-Override", "body"}, Allow, ""},
		{nil, []string{"listItems:header.X-HTTP-Method-Override=DEL*"}, []string{"header.X-Http-Method-Override"}, Deny, ""},
	} {
		c, err := New(tc.allow, nil, tc.deny)
		if err != nil {
			t.Fatal(err)
		}
		v := c.ToolParts("listItems", args, tc.parts)
		if v.Decision != tc.want || !strings.Contains(v.Reason, tc.reason) {
			t.Errorf("allow %q deny %q parts %q: %v %q, want %v %q", tc.allow, tc.deny, tc.parts, v.Decision, v.Reason, tc.want, tc.reason)
		}
	}
}
