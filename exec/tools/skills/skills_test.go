package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec"
)

var _ exec.Tool = (*Tool)(nil)

func skillMD(name, desc string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n# %s\nDo the thing.\n", name, desc, name)
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, src string
		want      frontMatter
		err       string
	}{
		{name: "plain", src: "---\nname: a\ndescription: does a\n---\nbody", want: frontMatter{Name: "a", Description: "does a"}},
		{name: "crlf", src: "---\r\nname: a\r\ndescription: does a\r\n---\r\nbody", want: frontMatter{Name: "a", Description: "does a"}},
		{name: "cr", src: "---\rname: a\rdescription: does a\r---\rbody", want: frontMatter{Name: "a", Description: "does a"}},
		{name: "trailing spaces on the opening line", src: "---  \nname: a\ndescription: d\n---\n", want: frontMatter{Name: "a", Description: "d"}},
		{name: "closing line of four dashes", src: "---\nname: a\ndescription: d\n----\n", want: frontMatter{Name: "a", Description: "d"}},
		{name: "no body", src: "---\nname: a\ndescription: d\n---", want: frontMatter{Name: "a", Description: "d"}},
		{name: "later rules in the body", src: "---\nname: a\ndescription: d\n---\ntext\n---\nmore", want: frontMatter{Name: "a", Description: "d"}},
		{name: "all fields", src: "---\nname: a\ndescription: d\nlicense: MIT\ncompatibility: any\nmetadata: {k: v}\nallowed-tools: Read, Grep ,\nextra: ignored\n---\n",
			want: frontMatter{Name: "a", Description: "d", License: "MIT", Compatibility: "any", Metadata: map[string]string{"k": "v"}, AllowedTools: stringOrList{"Read", "Grep"}}},
		{name: "allowed-tools list", src: "---\nname: a\ndescription: d\nallowed-tools: [Read, Bash]\n---\n",
			want: frontMatter{Name: "a", Description: "d", AllowedTools: stringOrList{"Read", "Bash"}}},
		{name: "markup kept", src: "---\nname: a</name>\ndescription: \"<b>x</b>\"\n---\n", want: frontMatter{Name: "a</name>", Description: "<b>x</b>"}},

		{name: "no front matter", src: "# a\nname: a\n", err: "no front matter: the file must start with a --- line"},
		{name: "text on the opening line", src: "---name: a\ndescription: d\n---\n", err: "no front matter"},
		{name: "not at the start", src: "\n---\nname: a\ndescription: d\n---\n", err: "no front matter"},
		{name: "empty file", src: "", err: "no front matter"},
		{name: "dashes only", src: "---", err: "has no closing --- line"},
		{name: "unclosed", src: "---\nname: a\ndescription: d\n", err: "has no closing --- line"},
		{name: "empty front matter", src: "---\n---\n", err: "has no name"},
		{name: "no name", src: "---\ndescription: d\n---\n", err: "has no name"},
		{name: "blank name", src: "---\nname: \"  \"\ndescription: d\n---\n", err: "has no name"},
		{name: "no description", src: "---\nname: a\n---\n", err: "has no description"},
		{name: "not yaml", src: "---\nname: [a\n---\n", err: "the front matter is not valid"},
		{name: "not a mapping", src: "---\njust text\n---\n", err: "the front matter is not valid"},
		{name: "metadata not strings", src: "---\nname: a\ndescription: d\nmetadata: {k: {x: y}}\n---\n", err: "the front matter is not valid"},
		{name: "long name", src: "---\nname: " + strings.Repeat("n", MaxName+1) + "\ndescription: d\n---\n", err: "the name is longer than 256 bytes"},
		{name: "long description", src: "---\nname: a\ndescription: " + strings.Repeat("d", MaxDescription+1) + "\n---\n", err: "the description is longer than 4096 bytes"},
		{name: "alias bomb", src: "---\nname: a\ndescription: d\nmetadata: &a {k: [*a, *a, *a, *a, *a, *a, *a, *a, *a]}\n---\n", err: "the front matter is not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse([]byte(tt.src))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// tree makes files (path → content; "-> TARGET" makes a symlink, a path
// ending in / a directory) under base.
func tree(t *testing.T, base string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(base, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			target = strings.ReplaceAll(target, "$BASE", base)
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDiscover(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		cwd   string // under base; "work" when empty
		home  string // under base; "home" when empty, "-" for none
		// want maps each skill found to its path under base.
		want  map[string]string
		notes []string // substrings of the notes, in order
	}{
		{
			name: "every root",
			files: map[string]string{
				"home/.codex/skills/deep/er/c/SKILL.md": skillMD("codex", "c"),
				"home/.claude/skills/cl/SKILL.md":       skillMD("claude", "c"),
				"home/.agents/skills/x/y/SKILL.md":      skillMD("agents", "c"),
				"work/.claude/skills/p/SKILL.md":        skillMD("project-claude", "c"),
				"work/.agents/skills/q/SKILL.md":        skillMD("project-agents", "c"),
			},
			want: map[string]string{
				"codex":          "home/.codex/skills/deep/er/c/SKILL.md",
				"claude":         "home/.claude/skills/cl/SKILL.md",
				"agents":         "home/.agents/skills/x/y/SKILL.md",
				"project-claude": "work/.claude/skills/p/SKILL.md",
				"project-agents": "work/.agents/skills/q/SKILL.md",
			},
		},
		{
			name: "later roots win a name",
			files: map[string]string{
				"home/.codex/skills/a/SKILL.md":  skillMD("s", "codex"),
				"home/.claude/skills/a/SKILL.md": skillMD("s", "claude"),
				"home/.agents/skills/a/SKILL.md": skillMD("s", "agents"),
				"home/.codex/skills/b/SKILL.md":  skillMD("t", "codex"),
				"home/.claude/skills/b/SKILL.md": skillMD("t", "claude"),
				"home/.codex/skills/c/SKILL.md":  skillMD("u", "codex"),
				"work/.claude/skills/c/SKILL.md": skillMD("u", "claude"),
				"work/.agents/skills/c/SKILL.md": skillMD("v", "agents"),
				"work/.claude/skills/d/SKILL.md": skillMD("v", "claude"),
			},
			want: map[string]string{
				"s": "home/.agents/skills/a/SKILL.md",
				"t": "home/.claude/skills/b/SKILL.md",
				"u": "work/.claude/skills/c/SKILL.md",
				"v": "work/.agents/skills/c/SKILL.md",
			},
		},
		{
			name: "the project from its git root down, closest wins",
			files: map[string]string{
				".agents/skills/above/SKILL.md":          skillMD("above", "outside the repository"),
				"repo/.git/":                             "",
				"repo/.agents/skills/a/SKILL.md":         skillMD("shared", "root"),
				"repo/.agents/skills/b/SKILL.md":         skillMD("root-only", "root"),
				"repo/sub/.agents/skills/a/SKILL.md":     skillMD("shared", "sub"),
				"repo/sub/dir/.agents/skills/c/SKILL.md": skillMD("here", "cwd"),
				"repo/sub/dir/.claude/skills/c/SKILL.md": skillMD("claude-here", "cwd"),
				"repo/.claude/skills/c/SKILL.md":         skillMD("claude-root", "only at cwd"),
			},
			cwd: "repo/sub/dir",
			want: map[string]string{
				"shared":      "repo/sub/.agents/skills/a/SKILL.md",
				"root-only":   "repo/.agents/skills/b/SKILL.md",
				"here":        "repo/sub/dir/.agents/skills/c/SKILL.md",
				"claude-here": "repo/sub/dir/.claude/skills/c/SKILL.md",
			},
		},
		{
			name: "a .git file is a root (worktree)",
			files: map[string]string{
				"wt/.git":                      "gitdir: /elsewhere\n",
				"wt/.agents/skills/a/SKILL.md": skillMD("a", "d"),
				"wt/x/":                        "",
			},
			cwd:  "wt/x",
			want: map[string]string{"a": "wt/.agents/skills/a/SKILL.md"},
		},
		{
			name: "outside a repository only cwd",
			files: map[string]string{
				"p/.agents/skills/a/SKILL.md":   skillMD("parent", "d"),
				"p/c/.agents/skills/b/SKILL.md": skillMD("cwd", "d"),
			},
			cwd:  "p/c",
			want: map[string]string{"cwd": "p/c/.agents/skills/b/SKILL.md"},
		},
		{
			name: "flat roots look one level down only",
			files: map[string]string{
				"home/.claude/skills/a/b/SKILL.md": skillMD("deep", "d"),
				"home/.claude/skills/SKILL.md":     skillMD("top", "d"),
				"work/.agents/skills/a/b/SKILL.md": skillMD("deep2", "d"),
				"home/.claude/skills/ok/SKILL.md":  skillMD("ok", "d"),
				"home/.claude/skills/empty/":       "",
			},
			want: map[string]string{"ok": "home/.claude/skills/ok/SKILL.md"},
		},
		{
			name: "hidden directories are skipped",
			files: map[string]string{
				"home/.codex/skills/.git/x/SKILL.md":   skillMD("h1", "d"),
				"home/.codex/skills/a/.h/SKILL.md":     skillMD("h2", "d"),
				"home/.claude/skills/.h/SKILL.md":      skillMD("h3", "d"),
				"work/.agents/skills/.system/SKILL.md": skillMD("h4", "d"),
				"home/.codex/skills/a/SKILL.md":        skillMD("shown", "d"),
			},
			want: map[string]string{"shown": "home/.codex/skills/a/SKILL.md"},
		},
		{
			name: "symlinked directories are not followed",
			files: map[string]string{
				"elsewhere/s/SKILL.md":          skillMD("linked", "d"),
				"home/.claude/skills/s":         "-> $BASE/elsewhere/s",
				"work/.agents/skills/s":         "-> $BASE/elsewhere/s",
				"home/.codex/skills/s":          "-> $BASE/elsewhere",
				"home/.codex/skills/loop":       "-> $BASE/home/.codex/skills",
				"home/.agents/skills/up":        "-> ..",
				"home/.codex/skills/a/SKILL.md": skillMD("real", "d"),
			},
			want: map[string]string{"real": "home/.codex/skills/a/SKILL.md"},
		},
		{
			name: "a symlinked root is read",
			files: map[string]string{
				"dotfiles/skills/a/SKILL.md": skillMD("a", "d"),
				"home/.claude/skills":        "-> $BASE/dotfiles/skills",
			},
			want: map[string]string{"a": "home/.claude/skills/a/SKILL.md"},
		},
		{
			name: "a symlinked SKILL.md is followed in the home directory and within the project; one leading out of the project is skipped unread",
			files: map[string]string{
				"elsewhere/good.md":                  skillMD("good", "d"),
				"elsewhere/other.md":                 skillMD("other", "d"),
				"secret/shadow":                      "root:$6$hash:19000:0:99999:7:::\n",
				"work/docs/inner.md":                 skillMD("inner", "d"),
				"home/.claude/skills/good/SKILL.md":  "-> $BASE/elsewhere/good.md",
				"work/.agents/skills/evil/SKILL.md":  "-> $BASE/secret/shadow",
				"work/.agents/skills/other/SKILL.md": "-> $BASE/elsewhere/other.md",
				"work/.claude/skills/inner/SKILL.md": "-> ../../../docs/inner.md",
				"work/.agents/skills/gone/SKILL.md":  "-> $BASE/nowhere",
			},
			want: map[string]string{"good": "home/.claude/skills/good/SKILL.md", "inner": "work/.claude/skills/inner/SKILL.md"},
			notes: []string{
				"work/.agents/skills/evil/SKILL.md: skipped: it leads to ",
				"work/.agents/skills/gone/SKILL.md: skipped: cannot be read: no such file or directory",
				"work/.agents/skills/other/SKILL.md: skipped: it leads to ",
			},
		},
		{
			name: "bad files are notes",
			files: map[string]string{
				"work/.agents/skills/a/SKILL.md":  "# no front matter\n",
				"work/.agents/skills/b/SKILL.md":  "---\nname: b\n---\n",
				"work/.agents/skills/c/SKILL.md":  "---\nname: c\ndescription: d\n---\n" + strings.Repeat("x", MaxFile),
				"work/.agents/skills/d/SKILL.md":  "---\nname: d\ndescription: \xff\n---\n",
				"work/.agents/skills/e/SKILL.md/": "",
				"work/.agents/skills/f/SKILL.md":  skillMD("fine", "d"),
			},
			want: map[string]string{"fine": "work/.agents/skills/f/SKILL.md"},
			notes: []string{
				"a/SKILL.md: skipped: no front matter",
				"b/SKILL.md: skipped: the front matter has no description",
				"c/SKILL.md: skipped: larger than 1024 KiB",
				"d/SKILL.md: skipped: not UTF-8 text",
				"e/SKILL.md: skipped: not a regular file",
			},
		},
		{
			name:  "no home",
			files: map[string]string{"home/.claude/skills/a/SKILL.md": skillMD("a", "d"), "work/.agents/skills/b/SKILL.md": skillMD("b", "d")},
			home:  "-",
			want:  map[string]string{"b": "work/.agents/skills/b/SKILL.md"},
		},
		{
			name:  "nothing",
			files: map[string]string{"work/": ""},
			want:  map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			tree(t, base, tt.files)
			cwd, home := "work", "home"
			if tt.cwd != "" {
				cwd = tt.cwd
			}
			if tt.home != "" {
				home = tt.home
			}
			homeDir := filepath.Join(base, home)
			if home == "-" {
				homeDir = ""
			}
			set := Discover(homeDir, filepath.Join(base, cwd))
			got := map[string]string{}
			for _, s := range set.Skills {
				rel, _ := filepath.Rel(base, s.Path)
				got[s.Name] = filepath.ToSlash(rel)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("skills %v\nwant %v", got, tt.want)
			}
			var notes []string
			for _, n := range set.Notes {
				notes = append(notes, n.String())
			}
			if len(notes) != len(tt.notes) {
				t.Fatalf("notes:\n%s\nwant %d", strings.Join(notes, "\n"), len(tt.notes))
			}
			for i, want := range tt.notes {
				if !strings.Contains(notes[i], want) {
					t.Errorf("note %d %q\nwant %q", i, notes[i], want)
				}
			}
		})
	}
}

// The roots are searched in cagent's order, whether they exist or not.
func TestSearched(t *testing.T) {
	base := t.TempDir()
	tree(t, base, map[string]string{"repo/.git/": "", "repo/a/": ""})
	set := Discover(filepath.Join(base, "home"), filepath.Join(base, "repo", "a"))
	var got []string
	for _, d := range set.Searched {
		rel, _ := filepath.Rel(base, d)
		got = append(got, filepath.ToSlash(rel))
	}
	want := []string{"home/.codex/skills", "home/.claude/skills", "home/.agents/skills", "repo/a/.claude/skills", "repo/.agents/skills", "repo/a/.agents/skills"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("searched %v\nwant %v", got, want)
	}
}

// More than MaxSkills names: the rest are notes; a name already found may
// still be overridden.
func TestMaxSkills(t *testing.T) {
	base := t.TempDir()
	files := map[string]string{}
	for i := range MaxSkills + 2 {
		files[fmt.Sprintf("home/.codex/skills/s%04d/SKILL.md", i)] = skillMD(fmt.Sprintf("s%04d", i), "d")
	}
	files["work/.agents/skills/x/SKILL.md"] = skillMD("s0000", "closer")
	tree(t, base, files)
	set := Discover(filepath.Join(base, "home"), filepath.Join(base, "work"))
	if len(set.Skills) != MaxSkills {
		t.Fatalf("%d skills", len(set.Skills))
	}
	if s, _ := set.Lookup("s0000"); s.Description != "closer" {
		t.Errorf("s0000 = %+v", s)
	}
	if len(set.Notes) != 2 || !strings.Contains(set.Notes[0].Msg, "more than 1000 skills") {
		t.Errorf("notes %v", set.Notes)
	}
}

// Notes are bounded; terminal control characters in a file name are
// escaped.
func TestNotesBounded(t *testing.T) {
	base := t.TempDir()
	files := map[string]string{}
	for i := range maxNotes + 5 {
		files[fmt.Sprintf("home/.codex/skills/s%03d/SKILL.md", i)] = "bad"
	}
	files["home/.codex/skills/\x1b[31mred/SKILL.md"] = "bad"
	tree(t, base, files)
	set := Discover(filepath.Join(base, "home"), "")
	if len(set.Notes) != maxNotes || set.Dropped != 6 {
		t.Fatalf("%d notes, %d dropped", len(set.Notes), set.Dropped)
	}
	if s := set.Notes[0].String(); !strings.Contains(s, `\x1b[31mred`) || strings.Contains(s, "\x1b") {
		t.Errorf("note %q", s)
	}
}

func TestPrompt(t *testing.T) {
	if (&Set{}).Prompt() != "" || (*Set)(nil).Prompt() != "" {
		t.Error("a prompt without skills")
	}
	set := &Set{Skills: []Skill{{Name: "a</name>", Description: "first"}, {Name: "b", Description: "multi\nline"}}}
	want := "Skills provide specialized instructions for specific tasks. When a user's request matches a skill's description, use read_skill to load its instructions.\n\n" +
		"<available_skills>\n" +
		"  <skill>\n    <name>a</name></name>\n    <description>first</description>\n  </skill>\n" +
		"  <skill>\n    <name>b</name>\n    <description>multi\nline</description>\n  </skill>\n" +
		"</available_skills>"
	if got := set.Prompt(); got != want {
		t.Errorf("prompt\n%s\nwant\n%s", got, want)
	}
}

// Discover sorts by name, whatever the search order.
func TestSorted(t *testing.T) {
	base := t.TempDir()
	tree(t, base, map[string]string{
		"home/.codex/skills/a/SKILL.md":  skillMD("zeta", "d"),
		"work/.agents/skills/z/SKILL.md": skillMD("alpha", "d"),
		"home/.claude/skills/m/SKILL.md": skillMD("Mid", "d"),
	})
	set := Discover(filepath.Join(base, "home"), filepath.Join(base, "work"))
	var names []string
	for _, s := range set.Skills {
		names = append(names, s.Name)
	}
	if want := []string{"Mid", "alpha", "zeta"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names %v", names)
	}
}

func call(t *testing.T, tool *Tool, args string) exec.Result {
	t.Helper()
	res, err := tool.Call(context.Background(), exec.ToolCall{ID: "c", Name: Name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Call(%s): %v", args, err)
	}
	return res
}

func TestNewTool(t *testing.T) {
	if NewTool(nil) != nil || NewTool(&Set{}) != nil {
		t.Error("a tool without skills")
	}
	spec := (&Tool{}).Spec()
	want := `{"type":"object","properties":{"name":{"type":"string","description":"The name of the skill to read"}},"required":["name"],"additionalProperties":false}`
	if spec.Name != "read_skill" || string(spec.Parameters) != want ||
		spec.Description != "Read the content of a skill by name. Use this when a user's request matches an available skill." {
		t.Errorf("spec %+v", spec)
	}
}

// read_skill returns the whole file as it is when called; a file that is
// no longer the skill found at the start is an error result.
func TestReadSkill(t *testing.T) {
	base := t.TempDir()
	raw := "---\r\nname: a\r\ndescription: d\r\n---\r\nDo A.\r\n"
	tree(t, base, map[string]string{
		"work/.agents/skills/a/SKILL.md": raw,
		"work/.agents/skills/b/SKILL.md": skillMD("b", "d"),
		"work/.agents/skills/c/SKILL.md": skillMD("c", "d"),
		"work/.agents/skills/e/SKILL.md": skillMD("e", "d"),
		"work/.agents/skills/f/SKILL.md": skillMD("f", "d"),
		"secret":                         "password\n",
		"other.md":                       skillMD("f", "other"),
	})
	set := Discover("", filepath.Join(base, "work"))
	tool := NewTool(set)
	dir := filepath.Join(base, "work", ".agents", "skills")

	if res := call(t, tool, `{"name":"a"}`); res.IsError || res.Text != raw {
		t.Errorf("a: %+v", res)
	}
	// Edited, still named b: the new text.
	if err := os.WriteFile(filepath.Join(dir, "b", "SKILL.md"), []byte(skillMD("b", "new")), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := call(t, tool, `{"name":"b"}`); res.IsError || !strings.Contains(res.Text, "description: new") {
		t.Errorf("b: %+v", res)
	}
	// Renamed in place.
	if err := os.WriteFile(filepath.Join(dir, "c", "SKILL.md"), []byte(skillMD("c2", "d")), 0o644); err != nil {
		t.Fatal(err)
	}
	// Swapped for a symlink to a secret, or to another skill file.
	for _, sw := range []struct{ name, target string }{{"e", "secret"}, {"f", "other.md"}} {
		p := filepath.Join(dir, sw.name, "SKILL.md")
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(base, sw.target), p); err != nil {
			t.Fatal(err)
		}
	}
	errs := []struct{ args, want string }{
		{`{"name":"c"}`, `it now names the skill "c2"`},
		{`{"name":"e"}`, "changed since the run started: it is now"},
		{`{"name":"f"}`, "changed since the run started: it is now"},
		{`{"name":"nope"}`, `skill "nope" not found`},
		{`{"name":"c2"}`, `skill "c2" not found`},
		{`{}`, "invalid arguments: name is required"},
		{`{"name":3}`, "invalid arguments"},
		{`nope`, "invalid arguments"},
	}
	for _, e := range errs {
		res := call(t, tool, e.args)
		if !res.IsError || !strings.Contains(res.Text, e.want) || strings.Contains(res.Text, "password") {
			t.Errorf("%s: %+v\nwant an error with %q", e.args, res, e.want)
		}
	}
	// Gone.
	if err := os.Remove(filepath.Join(dir, "a", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if res := call(t, tool, `{"name":"a"}`); !res.IsError || !strings.Contains(res.Text, "cannot be read") {
		t.Errorf("a gone: %+v", res)
	}
	// Grown past the bound.
	big := skillMD("b", "d") + strings.Repeat("x", MaxFile)
	if err := os.WriteFile(filepath.Join(dir, "b", "SKILL.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := call(t, tool, `{"name":"b"}`); !res.IsError || !strings.Contains(res.Text, "larger than 1024 KiB") {
		t.Errorf("b big: %.200s", res.Text)
	}
}
