package shell

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/exec/sandbox"
)

// benchModes are the sandbox mechanisms a benchmark runs under: off
// (--no-sandbox, the yardstick), the layered one and Landlock alone.
var benchModes = []sandbox.Mode{sandbox.Off, sandbox.Bwrap, sandbox.Landlock}

// benchSandbox makes a run's sandbox whose state dir is where a user's is,
// under the home (~/.cache here): under Landlock alone the rules grow with
// the entries beside it, and /tmp, where a test's temp dirs are, may hold
// thousands.
func benchSandbox(b *testing.B, mode sandbox.Mode) *sandbox.Sandbox {
	b.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		b.Skip(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o700); err != nil {
		b.Skip(err)
	}
	state, err := os.MkdirTemp(filepath.Join(home, ".cache"), "hitl-bench-")
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { os.RemoveAll(state) })
	sb, err := sandbox.New(mode, state)
	if err != nil {
		b.Skipf("no %s here: %v", mode, err)
	}
	b.Cleanup(sb.Close)
	return sb
}

// BenchmarkAllowedLine runs a line of 10 and of 300 programs allowed
// unasked (/bin/true; true is the interpreter's builtin), each started by
// the interpreter as a command nobody saw, under each sandbox mechanism.
func BenchmarkAllowedLine(b *testing.B) {
	c, err := permissions.New([]string{"shell:cmd=/bin/true"}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10, 300} {
		line := strings.Repeat("/bin/true; ", n-1) + "/bin/true"
		for _, mode := range benchModes {
			b.Run(strconv.Itoa(n)+"/"+string(mode), func(b *testing.B) {
				tool := New(Options{Sandbox: benchSandbox(b, mode), Permissions: c, BaseDir: b.TempDir()})
				for b.Loop() {
					res, err := tool.Call(b.Context(), toolCall(line))
					if err != nil || res.IsError {
						b.Fatal(err, res.Text)
					}
				}
			})
		}
	}
}

// BenchmarkApprovedLoop runs a line a person approved that runs /bin/true
// 1,000 times in a loop, under each sandbox mechanism.
func BenchmarkApprovedLoop(b *testing.B) {
	line := `i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done`
	for _, mode := range benchModes {
		b.Run(string(mode), func(b *testing.B) {
			dir := b.TempDir()
			tool := New(Options{Sandbox: benchSandbox(b, mode), BaseDir: dir})
			for b.Loop() {
				res, err := tool.run(b.Context(), line, dir, DefaultTimeout, false)
				if err != nil || res.IsError {
					b.Fatal(err, res.Text)
				}
			}
		})
	}
}
