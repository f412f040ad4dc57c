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
	bin := benchBinary(b)
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

// benchBinary is $HITL_BENCH_BIN, or hitl built once for the benchmark.
func benchBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("HITL_BENCH_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "hitl")
	if out, err := osexec.Command("go", "build", "-o", bin, "github.com/hitl-dev/hitl").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// tenPrograms is an agent whose one answer is a line of ten programs an
// allow rule runs unasked.
const tenPrograms = `version: "7"
models:
  offline:
    provider: script
    script:
      - tool_calls:
          - name: shell
            arguments: {cmd: "/bin/true; /bin/true; /bin/true; /bin/true; /bin/true; /bin/true; /bin/true; /bin/true; /bin/true; /bin/true"}
      - text: "done"
agents:
  root:
    model: offline
    instruction: run
    toolsets:
      - type: shell
permissions:
  allow: ["shell:cmd=/bin/true"]
`

// BenchmarkExecAllowedLine is a whole hitl exec of an agent whose allowed
// line runs ten programs, in the run's sandbox (the machine's best) and
// with --no-sandbox: what the sandbox adds to a run that starts commands.
//
//	go test ./cmd -run '^$' -bench ExecAllowedLine -count 10
func BenchmarkExecAllowedLine(b *testing.B) {
	bin := benchBinary(b)
	dir := b.TempDir()
	agent := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(agent, []byte(tenPrograms), 0o600); err != nil {
		b.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	// A state dir where a user's is (under Landlock alone the rules grow
	// with the entries beside it, and /tmp may hold thousands).
	state, err := os.MkdirTemp(filepath.Join(home, ".cache"), "hitl-bench-")
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { os.RemoveAll(state) })
	for _, bc := range []struct {
		name  string
		flags []string
	}{{"no-sandbox", []string{"--no-sandbox"}}, {"sandbox", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			args := append(append([]string{"exec"}, bc.flags...), agent, "go")
			for b.Loop() {
				cmd := osexec.Command(bin, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "HITL_PROMPT=", "CI=")
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
			}
		})
	}
}
