package sandbox

import (
	"context"
	osexec "os/exec"
	"testing"
)

// BenchmarkStart is the cost of starting and waiting for /bin/true through
// each mechanism, against a bare exec.Command.
func BenchmarkStart(b *testing.B) {
	b.Run("exec.Command", func(b *testing.B) {
		for b.Loop() {
			if err := osexec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range []Mode{Off, Bwrap, Landlock} {
		for _, access := range []Class{ClassApproved, ClassAuto} {
			if mode == Off && access == ClassAuto {
				continue
			}
			name := string(mode) + "/seen"
			if access == ClassAuto {
				name = string(mode) + "/unseen"
			}
			b.Run(name, func(b *testing.B) {
				sb, err := New(mode, b.TempDir())
				if err != nil {
					b.Skipf("no %s here: %v", mode, err)
				}
				dir := b.TempDir()
				for b.Loop() {
					c := sb.Command(context.Background(), Spec{Path: "/bin/true", Dir: dir, Class: access, Writable: []string{dir}, TempDir: dir})
					if err := c.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
