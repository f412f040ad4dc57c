package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// A path hidden by its name is hidden by every other name the mounts give
// it: a bind mount of a directory above it, or of it, elsewhere.
func TestAliasesOf(t *testing.T) {
	mounts := parseMounts(strings.NewReader(`21 1 254:0 / / rw - ext4 /dev/vda rw
22 21 0:5 / /proc rw - proc proc rw
30 21 254:0 /home/u /srv/alias rw - ext4 /dev/vda rw
31 21 254:0 /home/u/.ssh /mnt/keys\040dir rw - ext4 /dev/vda rw
32 21 0:40 / /tmp rw - tmpfs tmpfs rw
33 21 0:40 /x /data/x rw - tmpfs tmpfs rw
34 21 254:0 /var /home/u/work/var rw - ext4 /dev/vda rw
`))
	tests := []struct {
		path string
		want []string
	}{
		{"/home/u/.ssh", []string{"/srv/alias/.ssh", "/mnt/keys dir"}},
		{"/home/u/.local/state/hitl", []string{"/srv/alias/.local/state/hitl"}},
		{"/etc", nil},
		{"/tmp/x/y", []string{"/data/x/y"}},
		{"/tmp/z", nil},
		{"/home/u/work/var/lib", []string{"/var/lib"}},
		{"/proc/self", nil},
	}
	for _, tt := range tests {
		if got := aliasesOf(tt.path, mounts); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.path, got, tt.want)
		}
	}
}
