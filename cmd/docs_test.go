package cmd_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// notRun marks the shell block right after it as one no test runs, with the
// reason: <!-- not run by a test: it installs hitl -->
var notRun = regexp.MustCompile(`^<!-- not run by a test: (.+) -->$`)

// docCommand is one command of a shell block in the README or docs/.
type docCommand struct {
	where string // FILE:LINE
	text  string
}

// docCommands reads the commands of the ```sh blocks of a Markdown file and
// the "$ " lines of its ```console blocks. A line ending in \ continues on
// the next; blank lines and comments are not commands. A block after a
// notRun line is left out.
func docCommands(t *testing.T, path string) (cmds []docCommand, skipped []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	fence, skip, reason := "", false, ""
	var cont *docCommand
	for i, line := range lines {
		where := path + ":" + strconv.Itoa(i+1)
		if fence == "" {
			if m := notRun.FindStringSubmatch(line); m != nil {
				skip, reason = true, m[1]
				continue
			}
			if lang, ok := strings.CutPrefix(line, "```"); ok {
				fence = lang
				if fence == "" {
					fence = "text"
				}
				if skip && (fence == "sh" || fence == "console") {
					skipped = append(skipped, where+": "+reason)
					fence = "skipped"
				}
				skip = false
			} else if strings.TrimSpace(line) != "" {
				skip = false
			}
			continue
		}
		if strings.HasPrefix(line, "```") {
			fence, cont = "", nil
			continue
		}
		text := ""
		switch fence {
		case "sh":
			text = line
		case "console":
			if c, ok := strings.CutPrefix(line, "$ "); ok {
				text = c
			} else if cont != nil {
				text = line
			}
		}
		if cont != nil {
			cont.text += "\n" + text
			if !strings.HasSuffix(text, `\`) {
				cmds, cont = append(cmds, *cont), nil
			}
			continue
		}
		text = strings.TrimRight(text, " \t")
		if text == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		c := docCommand{where: where, text: text}
		if strings.HasSuffix(text, `\`) {
			cont = &c
			continue
		}
		cmds = append(cmds, c)
	}
	return cmds, skipped
}

// scriptRunLines are the lines of the .sh files of the testscripts that a
// script runs (its commands name the file): what a documented command must
// be to count as run by a test.
func scriptRunLines(t *testing.T) map[string]string {
	run := map[string]string{}
	err := filepath.WalkDir("../testdata/script", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".txtar") {
			return err
		}
		a, err := txtar.ParseFile(path)
		if err != nil {
			return err
		}
		// A .sh file is run when the script, or another of its .sh
		// files, runs it with sh.
		runs := string(a.Comment)
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".sh") {
				runs += "\n" + string(f.Data)
			}
		}
		for _, f := range a.Files {
			if !strings.HasSuffix(f.Name, ".sh") || !regexp.MustCompile(`\bsh (\S*/)?`+regexp.QuoteMeta(f.Name)+`\b`).MatchString(runs) {
				continue
			}
			for _, line := range strings.Split(strings.ReplaceAll(string(f.Data), "\\\n", "\\\x00"), "\n") {
				line = strings.ReplaceAll(strings.TrimRight(line, " \t"), "\\\x00", "\\\n")
				run[line] = filepath.Base(path) + ": " + f.Name
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestDocsCommandsRun: every command printed in the README and in docs/ is
// a line of a testscript's .sh file that the script runs, exactly as
// printed (docs/contributing.md). A block no test can run (installing
// hitl, the test suite itself) says why in a notRun comment before it.
func TestDocsCommandsRun(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../README.md"}, files...)
	run := scriptRunLines(t)
	for _, file := range files {
		cmds, skipped := docCommands(t, file)
		for _, s := range skipped {
			t.Logf("not run: %s", s)
		}
		for _, c := range cmds {
			if _, ok := run[c.text]; !ok {
				t.Errorf("%s: this command is run by no testscript as printed (put it in a .sh file of a testdata/script/*.txtar that runs it, see docs/contributing.md):\n\t%s", c.where, c.text)
			}
		}
	}
}

// TestDocsCommandsParse pins how commands are read from Markdown.
func TestDocsCommandsParse(t *testing.T) {
	md := "<!-- not run by a test: it installs -->\n```sh\ngo install .\n```\n" +
		"```sh\n# a comment\nhitl ask \"Deploy?\" --confirm\nssh-keygen -Y verify \\\n  -n x\n\n```\n" +
		"```console\n$ hitl sessions\nid agent\n```\n```yaml\n- match: x\n```\n"
	path := filepath.Join(t.TempDir(), "a.md")
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds, skipped := docCommands(t, path)
	var got []string
	for _, c := range cmds {
		got = append(got, c.text)
	}
	want := []string{`hitl ask "Deploy?" --confirm`, "ssh-keygen -Y verify \\\n  -n x", "hitl sessions"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("commands %q, want %q", got, want)
	}
	if len(skipped) != 1 || !strings.HasSuffix(skipped[0], "a.md:2: it installs") {
		t.Errorf("skipped %q", skipped)
	}
}
