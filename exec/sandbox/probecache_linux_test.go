package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A run trusts the state dir's word that bwrap runs only while the machine
// is as it was when bwrap last ran (bwrapKey); a failed probe leaves no
// word, and a sandbox that could not start takes it back.
func TestBwrapProbeIsKeptWhileTheMachineIsTheSame(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("no bwrap on PATH")
	}
	state := t.TempDir()
	file := filepath.Join(state, probeCacheFile)
	calls := 0
	works := func() (string, string) { calls++; return "/usr/bin/bwrap", "" }
	fails := func() (string, string) { calls++; return "", "bwrap cannot run here (test)" }

	tests := []struct {
		name      string
		before    func()
		probe     func() (string, string)
		wantCalls int
		wantWhy   bool
		wantFile  bool
	}{
		{"first run probes and keeps the word", nil, works, 1, false, true},
		{"next run trusts it", nil, works, 0, false, true},
		{"another machine state probes again", func() { os.WriteFile(file, []byte("bwrap /elsewhere 1:2 3 4.5\n"), 0o600) }, works, 1, false, true},
		{"a word taken back probes again", func() { forgetBwrapWorks(state) }, works, 1, false, true},
		{"a failed probe leaves no word", func() { forgetBwrapWorks(state) }, fails, 1, true, false},
		{"and is not trusted next time", nil, fails, 1, true, false},
	}
	for _, tc := range tests {
		if tc.before != nil {
			tc.before()
		}
		calls = 0
		_, why := cachedProbe(state, tc.probe)()
		_, err := os.Stat(file)
		if calls != tc.wantCalls || (why != "") != tc.wantWhy || (err == nil) != tc.wantFile {
			t.Errorf("%s: probe ran %d times (want %d), why %q, word kept %v (want %v)", tc.name, calls, tc.wantCalls, why, err == nil, tc.wantFile)
		}
	}
	if data, err := os.ReadFile(file); err == nil {
		t.Errorf("the word survived a failed probe: %q", data)
	}
}
