package rule

import (
	"strings"
	"testing"
)

// Globs match the whole text, case-insensitively; * crosses spaces, slashes
// and newlines; classes and escapes work as in a shell.
func TestGlob(t *testing.T) {
	globs := []struct {
		glob, text string
		want       bool
	}{
		{"git status*", "git status --short", true},
		{"git status*", "GIT STATUS", true},
		{"ls *", "ls /a b/c", true},
		{"ls ?", "ls a", true},
		{"ls ?", "ls ab", false},
		{"ls [ab]", "ls b", true},
		{"ls [!ab]", "ls b", false},
		{`ls \*`, "ls *", true},
		{`ls \*`, "ls x", false},
		{"echo*", "echo a\nb", true},
		{"a.b", "axb", false},
		{"ls [", "ls [", true},
	}
	for _, g := range globs {
		if got := compileGlob(g.glob).MatchString(g.text); got != g.want {
			t.Errorf("glob %q on %q = %v, want %v", g.glob, g.text, got, g.want)
		}
	}
}

// A glob runs to the next ":NAME=" segment, so it may hold colons; the tool
// part ends at the first ":NAME=", so MCP names keep theirs.
func TestParse(t *testing.T) {
	tests := []struct {
		text, tool string
		args       map[string]string // name -> a text the glob must match
	}{
		{"shell", "shell", nil},
		{"fetch:urls=http://127.0.0.1:8080/*", "fetch", map[string]string{"urls": "http://127.0.0.1:8080/x"}},
		{"shell:cmd=ls:oops", "shell", map[string]string{"cmd": "ls:oops"}},
		{"shell:cmd=echo a:b:cwd=/tmp*", "shell", map[string]string{"cmd": "echo a:b", "cwd": "/tmp/x"}},
		{"mcp:github:create_issue:title=bug*", "mcp:github:create_issue", map[string]string{"title": "bug 1"}},
		{"Shell:CMD=x", "Shell", map[string]string{"cmd": "x"}},
	}
	for _, tt := range tests {
		r, err := Parse(tt.text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.text, err)
		}
		if r.ToolGlob != tt.tool || len(r.Args) != len(tt.args) {
			t.Errorf("Parse(%q) = tool %q, %d args; want %q, %d", tt.text, r.ToolGlob, len(r.Args), tt.tool, len(tt.args))
		}
		for _, a := range r.Args {
			text, ok := tt.args[a.Name]
			if !ok || !a.Glob.MatchString(text) {
				t.Errorf("Parse(%q): arg %s does not match %q", tt.text, a.Name, text)
			}
		}
	}
	for text, want := range map[string]string{"": "empty rule", ":cmd=ls": "names no tool", "shell:c d=ls": "not an argument name"} {
		if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", text, err, want)
		}
	}
}

func TestMatchPath(t *testing.T) {
	for _, tt := range []struct {
		glob, path string
		want       bool
	}{
		{"/srv/*", "/srv/app/sub", true},
		{"*/sub", "/work/x/sub", true},
		{"/srv/app", "/srv/APP", false},
		{"/srv/app", "/srv/app2", false},
		{`/srv/\*`, "/srv/*", true},
	} {
		if got := MatchPath(tt.glob, tt.path); got != tt.want {
			t.Errorf("MatchPath(%q, %q) = %v, want %v", tt.glob, tt.path, got, tt.want)
		}
	}
}

// A URL pattern's host part never matches across /, ?, #, @ or \ (DESIGN
// §12): the host is judged as a host, whatever follows it.
func TestURLGlob(t *testing.T) {
	for _, tt := range []struct {
		glob, url string
		want      bool
	}{
		{"http://*.docs.example.com/*", "http://api.docs.example.com/x", true},
		{"http://*.docs.example.com/*", "http://127.0.0.1:38291/?.docs.example.com/", false},
		{"http://*.docs.example.com/*", "http://127.0.0.1:38291/x/.docs.example.com/", false},
		{"http://*.docs.example.com/*", "http://evil.com#.docs.example.com/", false},
		{"http://*.docs.example.com/*", "http://x@evil.com/.docs.example.com/", false},
		{"https://docs.x/public/*", "https://docs.x/public/a/b", true},
		{"https://docs.x/public/*", "https://docs.x/admin/a", false},
		{"https://*", "https://anything.example/path?q", true},
		{"http://127.0.0.1:8080/*", "http://127.0.0.1:8080/a", true},
	} {
		if got := compileURLGlob(tt.glob).MatchString(tt.url); got != tt.want {
			t.Errorf("%q on %q: %v, want %v", tt.glob, tt.url, got, tt.want)
		}
	}
}
