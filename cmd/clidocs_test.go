package cmd_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/cmd"
	"github.com/spf13/cobra/doc"
)

// cliDocsDir is where the CLI reference generated from the commands lives.
const cliDocsDir = "../docs/cli"

// genCLIDocs writes the markdown and man pages of every command into dir.
// Nothing in them depends on when or where they are made.
func genCLIDocs(t *testing.T, dir string) {
	t.Helper()
	ios := &cmd.IOStreams{In: bytes.NewReader(nil), Out: io.Discard, ErrOut: io.Discard,
		Getenv: func(string) string { return "" }, LookupEnv: func(string) (string, bool) { return "", false }}
	root := cmd.NewCmdRoot(ios)
	root.DisableAutoGenTag = true
	if err := os.MkdirAll(filepath.Join(dir, "man"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	header := &doc.GenManHeader{Title: "HITL", Section: "1", Source: "hitl", Manual: "hitl manual", Date: &date}
	if err := doc.GenManTree(root, header, filepath.Join(dir, "man")); err != nil {
		t.Fatal(err)
	}
}

// readTree reads every file under dir, by path relative to it.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = string(data)
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return files
}

// TestCLIReferenceUpToDate: docs/cli is what cobra/doc makes of the
// commands now. After changing a command, its flags or its help:
//
//	go test ./cmd -run TestCLIReferenceUpToDate -update
func TestCLIReferenceUpToDate(t *testing.T) {
	if *update {
		if err := os.RemoveAll(cliDocsDir); err != nil {
			t.Fatal(err)
		}
		genCLIDocs(t, cliDocsDir)
		return
	}
	tmp := t.TempDir()
	genCLIDocs(t, tmp)
	want, have := readTree(t, tmp), readTree(t, cliDocsDir)
	var names []string
	for name := range want {
		names = append(names, name)
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		switch w, h := want[name], have[name]; {
		case h == "" && w != "":
			t.Errorf("docs/cli/%s is missing", name)
		case w == "" && h != "":
			t.Errorf("docs/cli/%s is for no command", name)
		case w != h:
			t.Errorf("docs/cli/%s is stale", name)
		}
	}
	if t.Failed() {
		t.Log("regenerate the CLI reference: go test ./cmd -run TestCLIReferenceUpToDate -update")
	}
}
