package filesystem_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/filesystem"
)

// benchFiles is the size of the generated tree: 100 top directories of 10
// subdirectories of 100 files, about 1 KiB of text each; one file in 1000
// holds the word searched for; a .gitignore hides one subdirectory name.
const benchFiles = 100_000

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func benchTree(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "hitl-fs-bench-")
		if benchErr != nil {
			return
		}
		benchErr = os.WriteFile(filepath.Join(benchDir, ".gitignore"), []byte("*.tmp\ns9/\n"), 0o644)
		line := strings.Repeat("lorem ipsum dolor sit amet ", 3) + "\n"
		body := strings.Repeat(line, 12)
		n := 0
		for i := 0; i < 100 && benchErr == nil; i++ {
			for j := 0; j < 10 && benchErr == nil; j++ {
				d := filepath.Join(benchDir, fmt.Sprintf("d%02d", i), fmt.Sprintf("s%d", j))
				if benchErr = os.MkdirAll(d, 0o755); benchErr != nil {
					break
				}
				for k := 0; k < 100; k++ {
					content := body
					if n%1000 == 0 {
						content += "the needle is here\n"
					}
					n++
					if benchErr = os.WriteFile(filepath.Join(d, fmt.Sprintf("f%03d.txt", k)), []byte(content), 0o644); benchErr != nil {
						break
					}
				}
			}
		}
		if benchErr == nil && n != benchFiles {
			benchErr = fmt.Errorf("generated %d files, want %d", n, benchFiles)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

func benchCall(b *testing.B, ignore bool, tool string, args string) {
	dir := benchTree(b)
	ts := filesystem.New(filesystem.Options{WorkingDir: dir, IgnoreVCS: ignore})
	defer ts.Close()
	var tl exec.Tool
	for _, x := range ts.Tools() {
		if x.Spec().Name == tool {
			tl = x
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var res exec.Result
	for i := 0; i < b.N; i++ {
		var err error
		res, err = tl.Call(context.Background(), exec.ToolCall{Arguments: json.RawMessage(args)})
		if err != nil || res.IsError {
			b.Fatalf("%v %s", err, res.Text)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(res.Text)), "result-bytes")
}

// BenchmarkSearchFilesContent searches all 100,000 files (90,000 with
// ignore_vcs, which hides the s9 directories) for a word in one file of 1000.
func BenchmarkSearchFilesContent(b *testing.B) {
	for _, ignore := range []bool{false, true} {
		b.Run(fmt.Sprint("ignore_vcs=", ignore), func(b *testing.B) {
			benchCall(b, ignore, "search_files_content", `{"path":".","query":"needle"}`)
		})
	}
	b.Run("regex", func(b *testing.B) {
		benchCall(b, true, "search_files_content", `{"path":".","query":"need[l]e is","is_regex":true}`)
	})
}

// BenchmarkDirectoryTree builds the tree of the 100,000 files: it stops at
// MaxTreeEntries, so it costs the same on any larger tree.
func BenchmarkDirectoryTree(b *testing.B) {
	for _, ignore := range []bool{false, true} {
		b.Run(fmt.Sprint("ignore_vcs=", ignore), func(b *testing.B) {
			benchCall(b, ignore, "directory_tree", `{"path":"."}`)
		})
	}
}
