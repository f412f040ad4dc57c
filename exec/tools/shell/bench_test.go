package shell

import (
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/exec/sandbox"
)

// BenchmarkAllowedLine runs a line of 10 commands allowed unasked, each
// started by the interpreter as a command nobody saw, under each sandbox
// mechanism.
func BenchmarkAllowedLine(b *testing.B) {
	c, err := permissions.New([]string{"shell:cmd=/bin/true"}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	line := strings.Repeat("/bin/true; ", 9) + "/bin/true"
	for _, mode := range []sandbox.Mode{sandbox.Off, sandbox.Bwrap, sandbox.Landlock} {
		b.Run(string(mode), func(b *testing.B) {
			sb, err := sandbox.New(mode, b.TempDir())
			if err != nil {
				b.Skipf("no %s here: %v", mode, err)
			}
			tool := New(Options{Sandbox: sb, Permissions: c, BaseDir: b.TempDir()})
			for b.Loop() {
				res, err := tool.Call(b.Context(), toolCall(line))
				if err != nil || res.IsError {
					b.Fatal(err, res.Text)
				}
			}
		})
	}
}
