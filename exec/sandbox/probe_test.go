package sandbox

import (
	"context"
	"strings"
	"testing"
)

// Where neither bwrap nor Landlock works, the run says why, allow rules
// stop allowing, and a command nobody saw is never started unconfined.
// --no-sandbox (Off) is the explicit opt-out.
func TestNeitherMechanism(t *testing.T) {
	saved := probes
	t.Cleanup(func() { probes = saved })
	probes.cached = false
	probes.bwrap = func() (string, string) { return "", "bwrap cannot run here (setting up uid map: Permission denied)" }
	probes.landlock = func() (string, string) { return "", "the kernel has no Landlock" }

	tests := []struct {
		mode      Mode
		wantErr   string
		wantRules bool
		wantWhy   string
	}{
		{mode: Auto, wantRules: false, wantWhy: "allow rules do not apply"},
		{mode: Off, wantRules: true},
		{mode: Bwrap, wantErr: "bwrap was asked for"},
		{mode: Landlock, wantErr: "Landlock was asked for"},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			sb, err := New(tt.mode, t.TempDir())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sb.Mechanism() != MechNone || sb.AllowRulesApply() != tt.wantRules || !strings.Contains(sb.Why, tt.wantWhy) {
				t.Errorf("mechanism %s, allow rules %v, why %q", sb.Mechanism(), sb.AllowRulesApply(), sb.Why)
			}
			c := sb.Command(context.Background(), Spec{Path: "/bin/true", Class: ClassAuto})
			if err := c.Run(); (err == nil) != (tt.mode == Off) {
				t.Errorf("an unseen command under %s: %v", tt.mode, err)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"", "auto", "bwrap", "landlock", "off"} {
		if _, err := ParseMode(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseMode("on"); err == nil || !strings.Contains(err.Error(), "auto, bwrap, landlock, off") {
		t.Errorf("on: %v", err)
	}
}

// bwrap without Landlock cannot stop a command writing into a named pipe
// (a read-only mount does not), so allow rules do not apply there, and the
// run says why once; with both, the run gets both.
func TestLayersAllowRules(t *testing.T) {
	saved := probes
	t.Cleanup(func() { probes = saved })
	probes.cached = false
	tests := []struct {
		name      string
		landlock  string // why Landlock cannot run, "" when it can
		wantMech  Mechanism
		wantRules bool
		wantWhy   string
	}{
		{name: "both", wantMech: MechLayered, wantRules: true},
		{name: "bwrap only", landlock: "the kernel has no Landlock", wantMech: MechBwrap, wantRules: false, wantWhy: "allow rules do not apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probes.bwrap = func() (string, string) { return "/usr/bin/bwrap", "" }
			probes.landlock = func() (string, string) {
				if tt.landlock != "" {
					return "", tt.landlock
				}
				return "/proc/self/exe", ""
			}
			c, err := Probe(Auto)
			if err != nil {
				t.Fatal(err)
			}
			sb := &Sandbox{mech: c.Mechanism, mode: Auto}
			if c.Mechanism != tt.wantMech || sb.AllowRulesApply() != tt.wantRules || !strings.Contains(c.Why, tt.wantWhy) {
				t.Errorf("mechanism %s, allow rules %v, why %q", c.Mechanism, sb.AllowRulesApply(), c.Why)
			}
		})
	}
}
