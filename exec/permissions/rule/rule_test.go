package rule

import "testing"

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
