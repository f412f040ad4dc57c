//go:build linux

package model_test

import (
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hitl-dev/hitl/exec/ext/exttest"
	"github.com/hitl-dev/hitl/internal/fakellm"
)

// TestStreamForeverPeakMemory runs the real hitl binary against servers that
// stream forever (text deltas; one endless line) in both wire formats and
// checks that it exits 1 saying the turn passed its bound, with a peak
// resident set (getrusage ru_maxrss) bounded by a small multiple of the
// 16 MiB turn bound. Measured peaks are logged (go test -v -run
// TestStreamForeverPeakMemory ./exec/model).
func TestStreamForeverPeakMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the hitl binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "hitl")
	build := osexec.Command("go", "build", "-o", bin, "github.com/hitl-dev/hitl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The google provider runs in hitl-ext, next to hitl; closed at the
	// run's end, its peak is in hitl's (wait4 gives the larger of a
	// process's and its children's).
	if _, err := exttest.BuildInto(dir); err != nil {
		t.Fatal(err)
	}
	// What the binary itself holds at rest (its code, the SDKs' tables)
	// grows with its dependencies; the stream may add at most 80 MiB to
	// it: 16 MiB of turn, its copies, the GC's headroom.
	version := osexec.Command(bin, "version")
	if out, err := version.CombinedOutput(); err != nil {
		t.Fatalf("hitl version: %v\n%s", err, out)
	}
	base := version.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	maxPeakKiB := base + 80<<10
	t.Logf("at rest: %.1f MiB", float64(base)/1024)
	for _, f := range formats {
		for _, kind := range []string{"text", "line"} {
			t.Run(f.provider+"/"+kind, func(t *testing.T) {
				srv := fakellm.New(f.format, fakellm.Reply{Forever: kind, Repeat: true})
				defer srv.Close()
				base := srv.URL
				if f.provider == "openai" {
					base += "/v1"
				}
				agent := filepath.Join(dir, "agent.yaml")
				yaml := "version: \"7\"\nmodels:\n  m:\n    provider: " + f.provider + "\n    model: m\n    base_url: " + base +
					"\nagents:\n  root:\n    model: m\n    instruction: Say something.\n"
				if err := os.WriteFile(agent, []byte(yaml), 0o600); err != nil {
					t.Fatal(err)
				}
				args := []string{"exec", agent, "go"}
				if f.provider == "google" {
					// Started outside a sandbox, hitl-ext is hitl's own
					// child, whose peak wait4 reports with hitl's.
					args = []string{"exec", "--no-sandbox", agent, "go"}
				}
				cmd := osexec.Command(bin, args...)
				cmd.Env = append(os.Environ(), f.keyVar+"=k", "XDG_STATE_HOME="+filepath.Join(dir, "state"), "HITL_PROMPT=", "CI=")
				var stderr strings.Builder
				cmd.Stderr = &stderr
				err := cmd.Run()
				var ee *osexec.ExitError
				if err == nil || !errors.As(err, &ee) || ee.ExitCode() != 1 {
					t.Fatalf("hitl: %v, want exit 1; stderr:\n%s", err, stderr.String())
				}
				if !(strings.Contains(stderr.String(), "passed 16 MiB") || strings.Contains(stderr.String(), "reached 16 MiB")) || !strings.Contains(stderr.String(), "hitl stopped reading the response") {
					t.Errorf("stderr %q, want the bound's error", stderr.String())
				}
				peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
				t.Logf("%s %s: peak RSS %.1f MiB; %s", f.provider, kind, float64(peak)/1024, strings.TrimSpace(stderr.String()))
				if peak > maxPeakKiB {
					t.Errorf("peak RSS %d KiB, want at most %d KiB", peak, maxPeakKiB)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
			})
		}
	}
}
