//go:build linux

package sandbox

import (
	"testing"
)

// This file is the policy table test's only use of the sandbox's API: how
// a mechanism column is forced, and how a probe run becomes a Spec.

// policySandbox makes the sandbox of a mechanism column, forcing it by
// replacing the probes; why is set (and the sandbox nil) where the machine
// lacks the mechanism.
func policySandbox(t *testing.T, mech, stateDir string) (sb *Sandbox, why string) {
	t.Helper()
	saved := probes
	defer func() { probes = saved }()
	_, bwrapWhy := saved.bwrap()
	_, landlockWhy := saved.landlock()
	forcedOff := func() (string, string) { return "", "forced off by the policy table test" }
	probes.cached = false
	mode := Auto
	switch mech {
	case "bwrap+landlock":
		if bwrapWhy != "" || landlockWhy != "" {
			return nil, "the layered sandbox needs bwrap and Landlock: " + bwrapWhy + landlockWhy
		}
	case "landlock":
		if landlockWhy != "" {
			return nil, landlockWhy
		}
		probes.bwrap = forcedOff
	case "bwrap":
		if bwrapWhy != "" {
			return nil, bwrapWhy
		}
		probes.landlock = forcedOff
	case "none":
		mode = Off
	default:
		t.Fatalf("unknown mechanism %q", mech)
	}
	sb, err := New(mode, stateDir)
	if err != nil {
		t.Fatalf("sandbox for %s: %v", mech, err)
	}
	// Its per-run inits end with the column: another column's probe
	// must not find them.
	t.Cleanup(sb.Close)
	if got := string(sb.Mechanism()); got != mech {
		t.Fatalf("the sandbox for the %s column is %q (why: %q)", mech, got, sb.Why)
	}
	return sb, ""
}

// policySpec is the Spec that runs the probe as a child of class.
func policySpec(t *testing.T, class string, run probeRun) Spec {
	t.Helper()
	var c Class
	found := false
	for _, k := range Classes {
		if k.String() == class {
			c, found = k, true
		}
	}
	if !found {
		t.Fatalf("no sandbox class is named %q", class)
	}
	return Spec{
		Path: run.probe, Args: run.args, Dir: run.cwd, Env: run.env,
		Stdout: run.stdout, Stderr: run.stderr,
		Class: c, Writable: []string{run.workdir}, TempDir: run.tempDir, DenyRead: []string{run.deny},
	}
}
