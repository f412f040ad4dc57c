package permissions

import (
	"strings"
	"testing"
)

// Wrappers that run shell text no rule can see (DESIGN §12: env -S,
// flock -c, script -c, su -c, runuser, setsid, nohup, stdbuf, chroot,
// unshare, busybox sh) make a line that is never allowed unasked, whatever
// allow rule names the wrapper.
func TestNestedShellWrappers(t *testing.T) {
	allow := []string{}
	for _, w := range []string{"env", "flock", "script", "su", "runuser", "setsid", "nohup", "stdbuf", "chroot", "unshare", "busybox", "sg", "nsenter"} {
		allow = append(allow, "shell:cmd="+w+" *")
	}
	c, err := New(allow, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string
		want Decision
		why  string
	}{
		{`env -S 'sh -c "touch x"'`, None, "env -S"},
		{`env -iS 'touch x'`, None, "env -S"},
		{`env --split-string='touch x'`, None, "env -S"},
		{`env -- -S`, Allow, ""},
		{`flock /tmp/l -c 'touch x'`, None, "flock -c"},
		{`flock --command 'touch x' /tmp/l`, None, "flock -c"},
		{`script -qc 'touch x' /dev/null`, None, "script -c"},
		{`su root -c 'touch x'`, None, "su -c"},
		{`runuser -u nobody -c 'touch x'`, None, "runuser -c"},
		{`sg wheel -c 'touch x'`, None, "sg -c"},
		{`setsid sh -c 'touch x'`, None, "nested shell"},
		{`nohup bash -c 'touch x'`, None, "nested shell"},
		{`stdbuf -o0 sh -c 'touch x'`, None, "nested shell"},
		{`chroot / sh -c 'touch x'`, None, "nested shell"},
		{`unshare -r sh -c 'touch x'`, None, "nested shell"},
		{`busybox sh -c 'touch x'`, None, "nested shell"},
		{`nsenter -t 1 -m sh`, None, "nested shell"},
		{`env ls`, Allow, ""},
		{`flock /tmp/l ls`, Allow, ""},
	}
	for _, tt := range tests {
		for _, d := range []Dialect{DialectPOSIX, DialectBash} {
			v := c.Shell("shell", tt.line, map[string]any{"cmd": tt.line}, d)
			if v.Decision != tt.want || tt.why != "" && !strings.Contains(v.Reason, tt.why) {
				t.Errorf("%s: %q: %s (%q), want %s (%q)", d, tt.line, v.Decision, v.Reason, tt.want, tt.why)
			}
		}
	}
}
