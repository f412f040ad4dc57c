package filesystem

import "testing"

func TestIgnorePatterns(t *testing.T) {
	tests := []struct {
		pattern string
		path    string // relative to the .gitignore's directory
		isDir   bool
		want    bool // matched (ignored, or re-included for a ! pattern)
	}{
		{"*.log", "a.log", false, true},
		{"*.log", "deep/er/a.log", false, true},
		{"*.log", "a.log.txt", false, false},
		{"build/", "build", true, true},
		{"build/", "build", false, false}, // a file named build
		{"build/", "src/build", true, true},
		{"/build", "build", false, true},
		{"/build", "src/build", false, false},
		{"src/gen", "src/gen", true, true},
		{"src/gen", "x/src/gen", true, false}, // a middle slash anchors
		{"**/gen", "a/b/gen", false, true},
		{"**/gen", "gen", false, true},
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"a/**", "a/x/y", false, true},
		{"a/**", "b/a/x", false, false},
		{"doc/*.txt", "doc/x.txt", false, true},
		{"doc/*.txt", "doc/sub/x.txt", false, false},
		{"file?.c", "file1.c", false, true},
		{"file?.c", "file10.c", false, false},
		{"[abc].go", "b.go", false, true},
		{"[!abc].go", "b.go", false, false},
		{"[!abc].go", "d.go", false, true},
		{`\#hash`, "#hash", false, true},
		{`\!bang`, "!bang", false, true},
		{"trailing   ", "trailing", false, true},
		{"!keep.log", "keep.log", false, true},
	}
	for _, tc := range tests {
		p := parseIgnoreLine(tc.pattern)
		if p == nil {
			t.Errorf("%q: not a pattern", tc.pattern)
			continue
		}
		name := tc.path
		if i := lastSlash(tc.path); i >= 0 {
			name = tc.path[i+1:]
		}
		if got := p.match(tc.path, name, tc.isDir); got != tc.want {
			t.Errorf("%q on %q (dir %v) = %v, want %v", tc.pattern, tc.path, tc.isDir, got, tc.want)
		}
	}
	for _, blank := range []string{"", "# comment", "   ", "/"} {
		if p := parseIgnoreLine(blank); p != nil {
			t.Errorf("%q is a pattern: %+v", blank, p)
		}
	}
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

func TestShowText(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"short\ntext\n", "short\ntext"},
		{"esc \x1b[31m red", "esc \x1b[31m red"},
	}
	for _, tc := range tests {
		if got := showText(tc.in); got != tc.want {
			t.Errorf("showText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A repository's .gitignore is untrusted input: no line may panic.
func FuzzParseIgnoreLine(f *testing.F) {
	for _, s := range []string{"", " ", "!", "/", "**", "a/**/b", "[", "[!]", `\`, "[a-", "*.log ", `\ `, "!/x/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if p := parseIgnoreLine(line); p != nil {
			p.match("a/b", "b", true)
		}
	})
}
