package cmd

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkStartup starts the hitl binary (built once, as go install
// builds it) for `hitl version` and for a `hitl ask` that finds no answer
// (a git hook's call, exit 4), and reports the CPU each start takes
// (user+system, cpu-ms/op) beside the wall time: what every hook pays. Set
// HITL_BENCH_BIN to a binary to measure another build (an older one) the
// same way:
//
//	go test ./cmd -run '^$' -bench Startup -count 10
func BenchmarkStartup(b *testing.B) {
	bin := os.Getenv("HITL_BENCH_BIN")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "hitl")
		if out, err := osexec.Command("go", "build", "-o", bin, "github.com/hitl-dev/hitl").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	state := b.TempDir()
	for _, bc := range []struct {
		name string
		args []string
		code int
	}{
		{"version", []string{"version"}, 0},
		{"ask-unanswered", []string{"ask", "--confirm", "Deploy?"}, 4},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var cpu float64
			for b.Loop() {
				cmd := osexec.Command(bin, bc.args...)
				cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "HITL_PROMPT=", "CI=")
				err := cmd.Run()
				if got := cmd.ProcessState.ExitCode(); got != bc.code {
					b.Fatalf("%s: exit %d (%v), want %d", bc.name, got, err, bc.code)
				}
				cpu += float64((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Microseconds()) / 1000
			}
			b.ReportMetric(cpu/float64(b.N), "cpu-ms/op")
		})
	}
}
