package filesystem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/filesystem"
)

// tree makes files (path → content; a path ending in / is a directory)
// under a new directory and returns it.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func toolset(t testing.TB, o filesystem.Options) map[string]exec.Tool {
	t.Helper()
	ts := filesystem.New(o)
	t.Cleanup(func() { ts.Close() })
	m := map[string]exec.Tool{}
	for _, tl := range ts.Tools() {
		m[tl.Spec().Name] = tl
	}
	return m
}

func call(t testing.TB, tl exec.Tool, args any) exec.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Call(context.Background(), exec.ToolCall{ID: "c1", Name: tl.Spec().Name, Arguments: raw})
	if err != nil {
		t.Fatalf("%s(%s): %v", tl.Spec().Name, raw, err)
	}
	return res
}

func approval(t testing.TB, tl exec.Tool, args any) (exec.Approval, bool, error) {
	t.Helper()
	a, ok := tl.(exec.Acting)
	if !ok {
		t.Fatalf("%s is not exec.Acting", tl.Spec().Name)
	}
	raw, _ := json.Marshal(args)
	return a.Approval(context.Background(), exec.ToolCall{ID: "c1", Name: tl.Spec().Name, Arguments: raw})
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSpecsAreCagents(t *testing.T) {
	tools := toolset(t, filesystem.Options{WorkingDir: t.TempDir()})
	want := map[string][]string{ // tool → required arguments, then optional ones after "|"
		"read_file":            {"path"},
		"read_multiple_files":  {"paths", "|", "json"},
		"list_directory":       {"path", "|", "description"},
		"directory_tree":       {"path"},
		"search_files_content": {"path", "query", "|", "is_regex", "excludePatterns", "description"},
		"write_file":           {"path", "content", "|", "description"},
		"edit_file":            {"path", "edits", "|", "description"},
		"create_directory":     {"paths"},
		"remove_directory":     {"paths"},
	}
	if len(tools) != len(want) {
		t.Fatalf("got %d tools, want %d", len(tools), len(want))
	}
	for name, args := range want {
		tl, ok := tools[name]
		if !ok {
			t.Errorf("no tool %s", name)
			continue
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tl.Spec().Parameters, &schema); err != nil {
			t.Fatalf("%s: schema: %v", name, err)
		}
		var req []string
		optional := false
		for _, a := range args {
			if a == "|" {
				optional = true
				continue
			}
			if _, ok := schema.Properties[a]; !ok {
				t.Errorf("%s: no argument %s", name, a)
			}
			if !optional {
				req = append(req, a)
			}
		}
		if fmt.Sprint(schema.Required) != fmt.Sprint(req) {
			t.Errorf("%s: required %v, want %v", name, schema.Required, req)
		}
		if len(schema.Properties) != len(args)-boolToInt(optional) {
			t.Errorf("%s: %d properties, want %v", name, len(schema.Properties), args)
		}
	}
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestReadToolsResultShape(t *testing.T) {
	dir := tree(t, map[string]string{
		"a.txt":       "alpha\nbeta\n",
		"docs/b.md":   "# B\nbeta gamma\n",
		"docs/c.md":   "nothing\n",
		"empty/":      "",
		"bin.dat":     "x\x00y",
		"vendor/v.go": "beta\n",
	})
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	tests := []struct {
		tool    string
		args    any
		want    string
		isError bool
	}{
		{"read_file", map[string]any{"path": "a.txt"}, "alpha\nbeta\n", false},
		{"read_file", map[string]any{"path": "missing.txt"}, "not found", true},
		{"read_file", map[string]any{"path": "docs"}, "docs is a directory: use list_directory or directory_tree", true},
		{"read_file", map[string]any{"path": "bin.dat"}, "(binary file, 3 bytes, not shown)", false},
		{"read_file", map[string]any{"path": filepath.Join(dir, "a.txt")}, "alpha\nbeta\n", false},
		{"read_multiple_files", map[string]any{"paths": []string{"a.txt", "nope"}},
			"=== a.txt ===\nalpha\nbeta\n\n\n=== nope ===\nnot found\n\n", false},
		{"read_multiple_files", map[string]any{"paths": []string{"docs/c.md"}, "json": true},
			`[{"path":"docs/c.md","content":"nothing\n"}]`, false},
		{"list_directory", map[string]any{"path": "."},
			"FILE a.txt\nFILE bin.dat\nDIR  docs\nDIR  empty\nDIR  vendor\n", false},
		{"list_directory", map[string]any{"path": "empty"}, "(empty directory)\n", false},
		{"list_directory", map[string]any{"path": "a.txt"}, "a.txt is not a directory", true},
		{"directory_tree", map[string]any{"path": "docs"},
			`{"name":"docs","type":"directory","children":[{"name":"b.md","type":"file"},{"name":"c.md","type":"file"}]}`, false},
		{"directory_tree", map[string]any{"path": "empty"}, `{"name":"empty","type":"directory"}`, false},
		{"search_files_content", map[string]any{"path": ".", "query": "beta"},
			"a.txt:2:1: beta\ndocs/b.md:2:1: beta gamma\nvendor/v.go:1:1: beta\n(3 matches in 3 files)", false},
		{"search_files_content", map[string]any{"path": ".", "query": "beta", "excludePatterns": []string{"vendor/*", "*.txt"}},
			"docs/b.md:2:1: beta gamma\n(1 matches in 1 files)", false},
		{"search_files_content", map[string]any{"path": "docs", "query": "g[a-z]+a", "is_regex": true},
			"docs/b.md:2:6: beta gamma\n(1 matches in 1 files)", false},
		{"search_files_content", map[string]any{"path": ".", "query": "zzz"}, "No results found", false},
		{"search_files_content", map[string]any{"path": ".", "query": "(", "is_regex": true},
			"Invalid regex pattern: error parsing regexp: missing closing ): `(`", true},
		{"search_files_content", map[string]any{"path": ".", "query": ""},
			"query is empty: give the text or regular expression to search for", true},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res := call(t, tools[tc.tool], tc.args)
			if res.Text != tc.want || res.IsError != tc.isError {
				t.Errorf("%s(%v) = %q (error %v), want %q (error %v)", tc.tool, tc.args, res.Text, res.IsError, tc.want, tc.isError)
			}
			if _, acting := tools[tc.tool].(exec.Acting); acting {
				t.Errorf("%s reads but implements exec.Acting", tc.tool)
			}
		})
	}
}

func TestActingToolsResultShape(t *testing.T) {
	dir := tree(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "gone/": ""})
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	tests := []struct {
		tool    string
		args    any
		want    string
		isError bool
		file    string // checked afterwards: path → content
		content string
	}{
		{"write_file", map[string]any{"path": "new/b.txt", "content": "hello\n"},
			"File written successfully: new/b.txt (6 bytes)", false, "new/b.txt", "hello\n"},
		{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "two", "newText": "2"}}},
			"File edited successfully. Replaced 3 characters", false, "a.txt", "one\n2\nthree\n"},
		{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "one", "newText": "1"}, {"oldText": "three", "newText": "3"}}},
			"File edited successfully. Changes:\nEdit 1: Replaced 3 characters\nEdit 2: Replaced 5 characters", false, "a.txt", "1\n2\n3\n"},
		{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]string{{"oldText": "absent", "newText": "x"}}},
			"Edit 1 failed: old text not found", true, "a.txt", "1\n2\n3\n"},
		{"edit_file", map[string]any{"path": "nope.txt", "edits": []map[string]string{{"oldText": "a", "newText": "b"}}},
			"Error reading file: nope.txt: not found", true, "", ""},
		{"create_directory", map[string]any{"paths": []string{"x/y", "z"}},
			"Directory created successfully: x/y\nDirectory created successfully: z", false, "", ""},
		{"remove_directory", map[string]any{"paths": []string{"gone"}},
			"Directory removed successfully: gone", false, "", ""},
		{"remove_directory", map[string]any{"paths": []string{"gone"}},
			"Error removing directory gone: no such file or directory", true, "", ""},
		{"remove_directory", map[string]any{"paths": []string{"."}},
			". is the working directory (or one the toolset lists): it cannot be removed", true, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res := call(t, tools[tc.tool], tc.args)
			if res.Text != tc.want || res.IsError != tc.isError {
				t.Errorf("%s(%v) = %q (error %v), want %q (error %v)", tc.tool, tc.args, res.Text, res.IsError, tc.want, tc.isError)
			}
			if tc.file != "" {
				if got := readFile(t, filepath.Join(dir, tc.file)); got != tc.content {
					t.Errorf("%s holds %q, want %q", tc.file, got, tc.content)
				}
			}
		})
	}
	for _, d := range []string{"x/y", "z"} {
		if st, err := os.Stat(filepath.Join(dir, d)); err != nil || !st.IsDir() {
			t.Errorf("create_directory did not make %s", d)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gone")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("remove_directory left gone: %v", err)
	}
}

func TestApprovalOfActingTools(t *testing.T) {
	dir := tree(t, map[string]string{"docs/a.md": "line 1\nline 2\nline 3\n", "full/f": "x", "empty/": ""})
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	tests := []struct {
		name    string
		tool    string
		args    any
		wantArg map[string]any
		show    []string // each must appear in Show
		session string
		err     string
	}{
		{"edit shows a diff", "edit_file", map[string]any{"path": "docs/a.md", "edits": []map[string]string{{"oldText": "line 2", "newText": "LINE TWO"}}},
			map[string]any{"path": "docs/a.md", "edits": []any{map[string]any{"oldText": "line 2", "newText": "LINE TWO"}}},
			[]string{"edit_file docs/a.md: 21 bytes → 23 bytes (+1 -1 lines)", "--- a/docs/a.md", "+++ b/docs/a.md", "@@ -1,3 +1,3 @@", " line 1", "-line 2", "+LINE TWO", " line 3"}, "", ""},
		{"write of a new file diffs against /dev/null", "write_file", map[string]any{"path": "./docs/../new/b.md", "content": "hi\n"},
			map[string]any{"path": "new/b.md", "content": "hi\n"},
			[]string{"write_file new/b.md: new file, 3 bytes", "creates the directory new", "--- /dev/null", "+++ b/new/b.md", "+hi"}, "", ""},
		{"write of the same content says so", "write_file", map[string]any{"path": "docs/a.md", "content": "line 1\nline 2\nline 3\n"},
			map[string]any{"path": "docs/a.md", "content": "line 1\nline 2\nline 3\n"}, []string{"no change: the file already holds this content"}, "", ""},
		{"create shows the paths", "create_directory", map[string]any{"paths": []string{"n1", "docs"}},
			map[string]any{"paths": []any{"n1", "docs"}}, []string{"create directories:", "n1 (new)", "docs (exists already)"}, "create_directory\x00n1\x00docs", ""},
		{"remove shows the path", "remove_directory", map[string]any{"paths": []string{"empty"}},
			map[string]any{"paths": []any{"empty"}}, []string{"remove empty directories:", "empty (empty)"}, "", ""},
		{"remove of a full directory is refused before asking", "remove_directory", map[string]any{"paths": []string{"full"}},
			nil, nil, "", "full is not empty (it holds f): remove_directory removes only empty directories"},
		{"edit whose text is missing is refused before asking", "edit_file", map[string]any{"path": "docs/a.md", "edits": []map[string]string{{"oldText": "zzz", "newText": "y"}}},
			nil, nil, "", "Edit 1 failed: old text not found"},
		{"bad arguments", "write_file", map[string]any{"path": 3}, nil, nil, "", "invalid arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ok, err := approval(t, tools[tc.tool], tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !ok {
				t.Fatalf("Approval: ok %v err %v; want it to need approval", ok, err)
			}
			if fmt.Sprint(a.Args) != fmt.Sprint(tc.wantArg) {
				t.Errorf("Args = %v, want %v", a.Args, tc.wantArg)
			}
			for _, s := range tc.show {
				if !strings.Contains(a.Show, s) {
					t.Errorf("Show lacks %q:\n%s", s, a.Show)
				}
			}
			if a.SessionKey != tc.session {
				t.Errorf("SessionKey = %q, want %q", a.SessionKey, tc.session)
			}
			if a.Server != "" {
				t.Errorf("Server = %q", a.Server)
			}
		})
	}
}

// TestApprovalShowIsRawAndWhole: Show is the whole diff, unescaped and
// not shortened: the front end escapes it and, on a terminal, shortens it
// keeping both ends (prompt/tty fit); escaping here too would double every
// backslash on the screen, and a JSONL consumer wants the full diff.
func TestApprovalShowIsRawAndWhole(t *testing.T) {
	dir := t.TempDir()
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	var lines []string
	for i := 1; i <= 500; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	lines[0] = "evil \x1b]0;pwned\x07 \u202egnp.exe"
	lines[1] = `a literal \n backslash`
	lines[499] = "rm -rf ~ # the decisive last line"
	lines[250] = strings.Repeat("w", 5000)
	a, _, err := approval(t, tools["write_file"], map[string]any{"path": "s.sh", "content": strings.Join(lines, "\n")})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+evil \x1b]0;pwned\x07 \u202egnp.exe\n", "+a literal \\n backslash\n", "+line 250\n", "+" + strings.Repeat("w", 5000) + "\n", "+rm -rf ~ # the decisive last line"} {
		if !strings.Contains(a.Show, want) {
			t.Errorf("Show lacks %.80q", want)
		}
	}
	if strings.Contains(a.Show, "left out") || strings.Contains(a.Show, `\\x1b`) {
		t.Errorf("Show was shortened or escaped by the tool:\n%.500s", a.Show)
	}
}

func TestChangeAfterApprovalIsRefused(t *testing.T) {
	dir := tree(t, map[string]string{"a.txt": "v1\n"})
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	args := map[string]any{"path": "a.txt", "content": "v3\n"}
	if _, _, err := approval(t, tools["write_file"], args); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := call(t, tools["write_file"], args)
	if !res.IsError || !strings.Contains(res.Text, "changed after its change was approved") {
		t.Fatalf("got %+v", res)
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "v2\n" {
		t.Fatalf("a.txt = %q", got)
	}
	// Unchanged since the approval: written.
	if _, _, err := approval(t, tools["write_file"], args); err != nil {
		t.Fatal(err)
	}
	if res := call(t, tools["write_file"], args); res.IsError {
		t.Fatalf("got %+v", res)
	}
}

// escapes builds a working directory next to a directory outside it, with
// symlinks leading out, and returns both.
func escapes(t *testing.T) (work, outside string) {
	root := t.TempDir()
	work = filepath.Join(root, "work")
	outside = filepath.Join(root, "outside")
	for _, d := range []string{work, outside, filepath.Join(work, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644))
	must(os.MkdirAll(filepath.Join(outside, "empty"), 0o755))
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(work, "link.txt")))
	must(os.Symlink(outside, filepath.Join(work, "linkdir")))
	must(os.Symlink("../../outside", filepath.Join(work, "sub", "rel")))
	must(os.Symlink(filepath.Join(outside, "new.txt"), filepath.Join(work, "dangling.txt")))
	return work, outside
}

func TestPathEscapesAreRefused(t *testing.T) {
	work, outside := escapes(t)
	tools := toolset(t, filesystem.Options{WorkingDir: work})
	paths := []struct {
		name, path string
	}{
		{"dot-dot", "../outside/secret.txt"},
		{"absolute", filepath.Join(outside, "secret.txt")},
		{"symlink to a file outside", "link.txt"},
		{"symlinked parent", "linkdir/secret.txt"},
		{"relative symlinked parent", "sub/rel/secret.txt"},
		{"new file under a symlinked dir", "linkdir/new.txt"},
		{"new file deep under a symlinked dir", "linkdir/a/b/new.txt"},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			for _, tc := range []struct {
				tool string
				args map[string]any
			}{
				{"read_file", map[string]any{"path": p.path}},
				{"read_multiple_files", map[string]any{"paths": []string{p.path}}},
				{"write_file", map[string]any{"path": p.path, "content": "pwned"}},
				{"edit_file", map[string]any{"path": p.path, "edits": []map[string]string{{"oldText": "secret", "newText": "pwned"}}}},
				{"create_directory", map[string]any{"paths": []string{p.path + "/d"}}},
				{"list_directory", map[string]any{"path": filepath.Dir(p.path)}},
				{"search_files_content", map[string]any{"path": filepath.Dir(p.path), "query": "secret"}},
				{"directory_tree", map[string]any{"path": filepath.Dir(p.path)}},
			} {
				if tc.tool == "list_directory" || tc.tool == "search_files_content" || tc.tool == "directory_tree" {
					if d := filepath.Dir(p.path); d == "." || d == "sub" {
						continue // the parent is inside
					}
				}
				if a, ok := tools[tc.tool].(exec.Acting); ok {
					raw, _ := json.Marshal(tc.args)
					_, _, err := a.Approval(context.Background(), exec.ToolCall{ID: "x", Arguments: raw})
					if err == nil || !strings.Contains(err.Error(), "outside the working directory") {
						t.Errorf("%s Approval: err = %v, want outside the working directory", tc.tool, err)
					}
				}
				res := call(t, tools[tc.tool], tc.args)
				if !strings.Contains(res.Text, "outside the working directory") || strings.Contains(res.Text, "secret\n") {
					t.Errorf("%s(%v) = %q (error %v), want a refusal", tc.tool, tc.args, res.Text, res.IsError)
				}
				if !res.IsError && tc.tool != "read_multiple_files" {
					t.Errorf("%s: not an error result", tc.tool)
				}
			}
			if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "secret\n" {
				t.Fatalf("outside file changed: %q", got)
			}
			ents, _ := os.ReadDir(outside)
			if len(ents) != 2 {
				t.Fatalf("outside now holds %d entries", len(ents))
			}
		})
	}
	res := call(t, tools["remove_directory"], map[string]any{"paths": []string{"linkdir/empty"}})
	if !res.IsError || !strings.Contains(res.Text, "outside the working directory") {
		t.Errorf("remove_directory through a symlink: %q", res.Text)
	}
	if _, err := os.Stat(filepath.Join(outside, "empty")); err != nil {
		t.Errorf("outside/empty removed: %v", err)
	}
}

func TestDanglingSymlinkIsNotFollowed(t *testing.T) {
	work, outside := escapes(t)
	tools := toolset(t, filesystem.Options{WorkingDir: work})
	if res := call(t, tools["read_file"], map[string]any{"path": "dangling.txt"}); !res.IsError {
		t.Errorf("read_file of a dangling link: %q", res.Text)
	}
	res := call(t, tools["write_file"], map[string]any{"path": "dangling.txt", "content": "inside\n"})
	if !res.IsError || !strings.Contains(res.Text, "dangling.txt is a symlink") {
		t.Errorf("write_file: %q", res.Text)
	}
	if _, err := os.Lstat(filepath.Join(outside, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the write went through the link: %v", err)
	}
}

func TestSymlinksInsideAreFollowed(t *testing.T) {
	dir := tree(t, map[string]string{"real/a.txt": "A\n"})
	if err := os.Symlink("real", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	if res := call(t, tools["read_file"], map[string]any{"path": "alias/a.txt"}); res.Text != "A\n" {
		t.Fatalf("read_file = %q", res.Text)
	}
	a, _, err := approval(t, tools["write_file"], map[string]any{"path": "alias/a.txt", "content": "B\n"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Args["path"] != "real/a.txt" {
		t.Errorf("rules see %v, want where the write lands: real/a.txt", a.Args["path"])
	}
	call(t, tools["write_file"], map[string]any{"path": "alias/a.txt", "content": "B\n"})
	if got := readFile(t, filepath.Join(dir, "real", "a.txt")); got != "B\n" {
		t.Errorf("real/a.txt = %q", got)
	}
}

func TestAllowedDirs(t *testing.T) {
	work := t.TempDir()
	extra := tree(t, map[string]string{"shared.txt": "shared\n"})
	tools := toolset(t, filesystem.Options{WorkingDir: work, AllowedDirs: []string{extra}})
	p := filepath.Join(extra, "shared.txt")
	if res := call(t, tools["read_file"], map[string]any{"path": p}); res.Text != "shared\n" {
		t.Fatalf("read_file = %q", res.Text)
	}
	a, _, err := approval(t, tools["write_file"], map[string]any{"path": p, "content": "x"})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(p)
	if a.Args["path"] != filepath.ToSlash(real) {
		t.Errorf("Args = %v, want the absolute path", a.Args)
	}
	if res := call(t, tools["read_file"], map[string]any{"path": filepath.Join(filepath.Dir(extra), "x")}); !strings.Contains(res.Text, "and in "+extra) {
		t.Errorf("refusal does not name the listed directory: %q", res.Text)
	}
}

// treePaths flattens directory_tree's JSON into slash paths below the top.
func treePaths(t *testing.T, text string) map[string]bool {
	t.Helper()
	type node struct {
		Name     string  `json:"name"`
		Type     string  `json:"type"`
		Children []*node `json:"children"`
	}
	var top node
	if err := json.Unmarshal([]byte(text), &top); err != nil {
		t.Fatalf("directory_tree is not JSON: %v\n%s", err, text)
	}
	paths := map[string]bool{}
	var walk func(prefix string, n *node)
	walk = func(prefix string, n *node) {
		for _, c := range n.Children {
			p := prefix + c.Name
			paths[p] = true
			walk(p+"/", c)
		}
	}
	walk("", &top)
	return paths
}

func TestIgnoreVCS(t *testing.T) {
	files := map[string]string{
		".git/config":         "needle",
		".gitignore":          "*.log\n/build/\n!keep.log\ncache/\n# comment\nsecret?.txt\ndocs/**/gen.md\n",
		"a.go":                "needle",
		"x.log":               "needle",
		"keep.log":            "needle",
		"build/out.go":        "needle",
		"sub/build/kept.go":   "needle", // /build/ is anchored
		"sub/cache/c.go":      "needle",
		"sub/.gitignore":      "local.txt\n",
		"sub/local.txt":       "needle",
		"local.txt":           "needle", // the nested rule applies only in sub
		"secret1.txt":         "needle",
		"docs/a/b/gen.md":     "needle",
		"docs/gen.md":         "needle", // ** matches no directory too
		"docs/a/other.md":     "needle",
		"sub/deeper/x.log":    "needle",
		"sub/deeper/keep.log": "needle",
	}
	visible := []string{".gitignore", "a.go", "keep.log", "sub/build/kept.go", "sub/.gitignore", "local.txt", "docs/a/other.md", "sub/deeper/keep.log"}
	hidden := []string{".git", "x.log", "build", "sub/cache", "sub/local.txt", "secret1.txt", "docs/a/b/gen.md", "docs/gen.md", "sub/deeper/x.log"}
	dir := tree(t, files)

	for _, ignore := range []bool{true, false} {
		t.Run(fmt.Sprint("ignore_vcs=", ignore), func(t *testing.T) {
			tools := toolset(t, filesystem.Options{WorkingDir: dir, IgnoreVCS: ignore})
			inTree := treePaths(t, call(t, tools["directory_tree"], map[string]any{"path": "."}).Text)
			search := "\n" + call(t, tools["search_files_content"], map[string]any{"path": ".", "query": "needle"}).Text
			list := call(t, tools["list_directory"], map[string]any{"path": "."}).Text
			for _, p := range visible {
				if !inTree[p] {
					t.Errorf("tree hides %s", p)
				}
				if !strings.HasSuffix(p, ".gitignore") && !strings.Contains(search, "\n"+p+":") {
					t.Errorf("search hides %s", p)
				}
			}
			for _, p := range hidden {
				inSearch := strings.Contains(search, "\n"+p+"/") || strings.Contains(search, "\n"+p+":")
				if ignore == inTree[p] || ignore == inSearch {
					t.Errorf("%s: in tree %v, in search %v", p, inTree[p], inSearch)
				}
			}
			if ignore == strings.Contains(list, "DIR  .git\n") || ignore == strings.Contains(list, "FILE x.log\n") {
				t.Errorf("list_directory:\n%s", list)
			}
			if ignore != strings.Contains(list, "(4 entries hidden by ignore_vcs)") {
				t.Errorf("list_directory does not say entries were hidden:\n%s", list)
			}
			sub := call(t, tools["list_directory"], map[string]any{"path": "sub"}).Text
			if ignore == strings.Contains(sub, "local.txt") {
				t.Errorf("list_directory sub:\n%s", sub)
			}
			inBuild := call(t, tools["list_directory"], map[string]any{"path": "build"}).Text
			if ignore != strings.Contains(inBuild, "hidden by ignore_vcs") {
				t.Errorf("list_directory of an ignored directory:\n%s", inBuild)
			}
			// Reading a named file is never hidden.
			if res := call(t, tools["read_file"], map[string]any{"path": "x.log"}); res.Text != "needle" {
				t.Errorf("read_file x.log = %q", res.Text)
			}
		})
	}
}

func TestIgnoreVCSFromASubdirectoryOfTheRepository(t *testing.T) {
	dir := tree(t, map[string]string{
		".git/HEAD":     "ref",
		".gitignore":    "*.tmp\n",
		"proj/a.txt":    "needle",
		"proj/b.tmp":    "needle",
		"proj/.git_not": "needle",
	})
	tools := toolset(t, filesystem.Options{WorkingDir: filepath.Join(dir, "proj"), IgnoreVCS: true})
	got := call(t, tools["search_files_content"], map[string]any{"path": ".", "query": "needle"}).Text
	if strings.Contains(got, "b.tmp") || !strings.Contains(got, "a.txt") {
		t.Errorf("the repository's .gitignore above the working directory was not applied:\n%s", got)
	}
}

func TestPostEdit(t *testing.T) {
	dir := tree(t, map[string]string{"a.go": "package a\n", "b.txt": "b\n"})
	tools := toolset(t, filesystem.Options{
		WorkingDir: dir,
		PostEdit: []filesystem.PostEdit{
			{Path: "*.go", Cmd: `echo "formatted $path in $(pwd)"; echo SECRET-VALUE`},
			{Path: "*.txt", Cmd: "echo failing; exit 3"},
			{Path: "slow/*", Cmd: "sleep 30"},
		},
		PostEditTimeout: 300 * time.Millisecond,
		Secrets:         maskSecret{},
	})
	real, _ := filepath.EvalSymlinks(dir)
	res := call(t, tools["write_file"], map[string]any{"path": "a.go", "content": "package a // x\n"})
	want := fmt.Sprintf("File written successfully: a.go (15 bytes)\npost_edit ran `echo \"formatted $path in $(pwd)\"; echo ***` (exit 0):\nformatted %s in %s\n***", filepath.Join(real, "a.go"), real)
	if res.Text != want || res.IsError {
		t.Errorf("got  %q\nwant %q", res.Text, want)
	}
	res = call(t, tools["edit_file"], map[string]any{"path": "b.txt", "edits": []map[string]string{{"oldText": "b", "newText": "c"}}})
	if !res.IsError || !strings.Contains(res.Text, "post_edit ran `echo failing; exit 3` (exit status 3):\nfailing\nThe file was written; the post-edit command failed.") {
		t.Errorf("got %q", res.Text)
	}
	if got := readFile(t, filepath.Join(dir, "b.txt")); got != "c\n" {
		t.Errorf("b.txt = %q", got)
	}
	start := time.Now()
	res = call(t, tools["write_file"], map[string]any{"path": "slow/x", "content": ""})
	if !res.IsError || !strings.Contains(res.Text, "stopped after 300ms") || time.Since(start) > 10*time.Second {
		t.Errorf("got %q after %v", res.Text, time.Since(start))
	}
	res = call(t, tools["write_file"], map[string]any{"path": "c.md", "content": ""})
	if strings.Contains(res.Text, "post_edit") {
		t.Errorf("a post_edit ran for c.md: %q", res.Text)
	}
}

type maskSecret struct{}

func (maskSecret) Mask(s string) string { return strings.ReplaceAll(s, "SECRET-VALUE", "***") }

func TestSecretsAreMaskedInResults(t *testing.T) {
	dir := tree(t, map[string]string{"a.txt": "token=SECRET-VALUE\n"})
	tools := toolset(t, filesystem.Options{WorkingDir: dir, Secrets: maskSecret{}})
	for tool, args := range map[string]any{
		"read_file":            map[string]any{"path": "a.txt"},
		"read_multiple_files":  map[string]any{"paths": []string{"a.txt"}},
		"search_files_content": map[string]any{"path": ".", "query": "token"},
	} {
		if res := call(t, tools[tool], args); strings.Contains(res.Text, "SECRET-VALUE") || !strings.Contains(res.Text, "***") {
			t.Errorf("%s = %q", tool, res.Text)
		}
	}
}

func TestBounds(t *testing.T) {
	files := map[string]string{
		"big.txt":   strings.Repeat("needle ", filesystem.MaxFileSize/7+100),
		"huge.txt":  strings.Repeat("x", filesystem.MaxFileSize+1) + "needle",
		"binary.db": "needle\x00",
	}
	for i := 0; i < filesystem.MaxTreeEntries+10; i++ {
		files[fmt.Sprintf("many/f%04d.txt", i)] = "needle\n"
	}
	dir := tree(t, files)
	tools := toolset(t, filesystem.Options{WorkingDir: dir})

	res := call(t, tools["read_file"], map[string]any{"path": "big.txt"})
	if len(res.Text) > filesystem.MaxFileSize+200 || !strings.Contains(res.Text, "[cut: the file is") {
		t.Errorf("read_file of a big file: %d bytes, ends %q", len(res.Text), res.Text[len(res.Text)-80:])
	}
	res = call(t, tools["read_multiple_files"], map[string]any{"paths": []string{"big.txt", "many/f0001.txt"}})
	if len(res.Text) > filesystem.MaxFileSize+500 || !strings.Contains(res.Text, "(not read: this result reached its 1 MiB bound") {
		t.Errorf("read_multiple_files: %d bytes", len(res.Text))
	}
	res = call(t, tools["search_files_content"], map[string]any{"path": ".", "query": "needle"})
	if n := strings.Count(res.Text, "\n"); n > filesystem.MaxMatches+3 {
		t.Errorf("search gave %d lines", n)
	}
	for _, want := range []string{"stopped at 200 matches", "(2 files larger than 1 MiB not searched)"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("search result lacks %q: ...%s", want, res.Text[len(res.Text)-300:])
		}
	}
	if strings.Contains(res.Text, "binary.db") {
		t.Errorf("binary file searched")
	}
	if len(res.Text) > filesystem.MaxResult+1000 {
		t.Errorf("search result is %d bytes", len(res.Text))
	}
	res = call(t, tools["directory_tree"], map[string]any{"path": "."})
	if !strings.Contains(res.Text, "(tree cut at 1000 entries") {
		t.Errorf("tree not capped: ...%s", res.Text[max(0, len(res.Text)-200):])
	}
	js, _, _ := strings.Cut(res.Text, "\n(tree cut")
	if !json.Valid([]byte(js)) {
		t.Errorf("capped tree is not JSON: ...%s", js[max(0, len(js)-200):])
	}
	res = call(t, tools["list_directory"], map[string]any{"path": "many"})
	if n := strings.Count(res.Text, "FILE "); n != filesystem.MaxListEntries || !strings.Contains(res.Text, "output truncated") {
		t.Errorf("list_directory gave %d entries", n)
	}
}

func TestCancelledSearchStops(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 600; i++ {
		files[fmt.Sprintf("d%d/f.txt", i)] = "x"
	}
	dir := tree(t, files)
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range []string{"search_files_content", "directory_tree"} {
		_, err := tools[tool].Call(ctx, exec.ToolCall{Arguments: json.RawMessage(`{"path":".","query":"zz"}`)})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", tool, err)
		}
	}
}

func TestWriteReplacesHardLinksAndKeepsMode(t *testing.T) {
	dir := tree(t, map[string]string{"run.sh": "#!/bin/sh\n"})
	outside := filepath.Join(t.TempDir(), "linked")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "run.sh"), outside); err != nil {
		t.Skip("no hard links:", err)
	}
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	if res := call(t, tools["write_file"], map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}); res.IsError {
		t.Fatal(res.Text)
	}
	if got := readFile(t, outside); got != "#!/bin/sh\n" {
		t.Errorf("the write reached a hard link outside: %q", got)
	}
	if st, _ := os.Stat(filepath.Join(dir, "run.sh")); st.Mode().Perm() != 0o750 {
		t.Errorf("mode = %v", st.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func TestSymlinkRetargetedAfterApprovalIsRefused(t *testing.T) {
	dir := tree(t, map[string]string{"one/a.txt": "same\n", "two/a.txt": "same\n"})
	link := filepath.Join(dir, "cur")
	if err := os.Symlink("one", link); err != nil {
		t.Fatal(err)
	}
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	args := map[string]any{"path": "cur/a.txt", "content": "new\n"}
	a, _, err := approval(t, tools["write_file"], args)
	if err != nil || a.Args["path"] != "one/a.txt" {
		t.Fatalf("Approval: %v %v", a.Args, err)
	}
	os.Remove(link)
	if err := os.Symlink("two", link); err != nil {
		t.Fatal(err)
	}
	res := call(t, tools["write_file"], args)
	if !res.IsError || !strings.Contains(res.Text, "now leads to two/a.txt, not to one/a.txt") {
		t.Fatalf("got %+v", res)
	}
	if readFile(t, filepath.Join(dir, "two/a.txt")) != "same\n" {
		t.Fatal("two/a.txt written")
	}
}

// The reads say what permission rules judge of a call: each path as it
// really lands (as the writes' approvals name it), so a deny rule for
// .git/* is not passed by ./.git/config, x/../.git/config, an absolute
// path or a symlink to .git.
func TestReadRuleArgsResolvePaths(t *testing.T) {
	dir := tree(t, map[string]string{".git/config": "x", "a.txt": "a"})
	if err := os.Symlink(".git", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	tools := toolset(t, filesystem.Options{WorkingDir: dir})
	type ruleArgser interface {
		RuleArgs(exec.ToolCall) map[string]any
	}
	tests := []struct {
		tool, args, want string
	}{
		{"read_file", `{"path":"./.git/config"}`, `{"path":".git/config"}`},
		{"read_file", `{"path":"nowhere/../.git//config"}`, `{"path":".git/config"}`},
		{"read_file", `{"path":"alias/config"}`, `{"path":".git/config"}`},
		{"read_file", `{"path":"` + real + `/.git/config"}`, `{"path":".git/config"}`},
		{"read_file", `{"path":"../outside"}`, `{"path":"../outside"}`}, // refused by the read
		{"read_multiple_files", `{"paths":["a.txt","./alias/config"],"json":true}`, `{"json":true,"paths":["a.txt",".git/config"]}`},
		{"list_directory", `{"path":""}`, `{"path":"."}`},
		{"directory_tree", `{"path":"alias"}`, `{"path":".git"}`},
		{"search_files_content", `{"path":"./alias/","query":"x"}`, `{"path":".git","query":"x"}`},
	}
	for _, tc := range tests {
		r, ok := tools[tc.tool].(ruleArgser)
		if !ok {
			t.Fatalf("%s does not say what rules judge", tc.tool)
		}
		got, _ := json.Marshal(r.RuleArgs(exec.ToolCall{Name: tc.tool, Arguments: json.RawMessage(tc.args)}))
		if string(got) != tc.want {
			t.Errorf("%s %s: rule args %s, want %s", tc.tool, tc.args, got, tc.want)
		}
	}
}
