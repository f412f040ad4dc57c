package sandbox

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
)

// benchStateDir is a state dir where a user's is, under the home
// (~/.cache here): under Landlock alone the rules grow with the entries
// beside the hidden paths, and /tmp, where a test's temp dirs are, may
// hold thousands.
func benchStateDir(b *testing.B) string {
	b.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		b.Skip(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o700); err != nil {
		b.Skip(err)
	}
	dir, err := os.MkdirTemp(filepath.Join(home, ".cache"), "hitl-bench-")
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// BenchmarkStart is the cost of starting and waiting for /bin/true through
// each mechanism, in the run's sandbox (one per run and view) and in a
// sandbox of its own (the fallback), against a bare exec.Command.
func BenchmarkStart(b *testing.B) {
	b.Run("exec.Command", func(b *testing.B) {
		for b.Loop() {
			if err := osexec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range []Mode{Off, Bwrap, Landlock} {
		for _, class := range []Class{ClassApproved, ClassAuto} {
			for _, perRun := range []bool{true, false} {
				if mode == Off && (class == ClassAuto || !perRun) {
					continue
				}
				name := string(mode) + "/" + class.String()
				if mode != Off {
					name += map[bool]string{true: "/per-run", false: "/per-command"}[perRun]
				}
				b.Run(name, func(b *testing.B) {
					saved := perRunEnabled
					perRunEnabled = perRun
					defer func() { perRunEnabled = saved }()
					sb, err := New(mode, benchStateDir(b))
					if err != nil {
						b.Skipf("no %s here: %v", mode, err)
					}
					defer sb.Close()
					if perRun && sb.perRun.off && mode != Off {
						b.Skipf("no per-run sandbox here: %s", sb.Why)
					}
					dir := b.TempDir()
					for b.Loop() {
						c := sb.Command(context.Background(), Spec{Path: "/bin/true", Dir: dir, Class: class, Writable: []string{dir}, TempDir: dir})
						if err := c.Run(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
