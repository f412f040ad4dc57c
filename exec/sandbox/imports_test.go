package sandbox

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Only this package starts processes (DESIGN §12): no other package of
// hitl imports os/exec, or calls os.StartProcess or syscall.ForkExec. Tests
// and the test servers they build are the exceptions.
func TestOnlyTheSandboxStartsProcesses(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(rel string) bool {
		return strings.HasPrefix(rel, "exec/sandbox/") || strings.Contains(rel, "test/") // mcptest, remotetest: test servers
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() && path != root {
			// A nested module (contrib/temporal) is another program: it
			// starts hitl, as a shell would, and is not part of hitl.
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if allowed(rel) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, call := range []string{"os.StartProcess(", "syscall.ForkExec(", "syscall.Exec(", "unix.Exec("} {
			if strings.Contains(string(src), call) {
				t.Errorf("%s calls %s: start processes through exec/sandbox", rel, call)
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "os/exec" {
				t.Errorf("%s imports os/exec: start processes through exec/sandbox", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
