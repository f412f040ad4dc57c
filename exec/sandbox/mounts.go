package sandbox

import (
	"bufio"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// mountEntry is one line of /proc/self/mountinfo: the device, the directory of
// that device's file system it shows, and where.
type mountEntry struct {
	dev, root, point string
}

// parseMounts reads mountinfo's lines (unreadable ones are skipped).
func parseMounts(r io.Reader) []mountEntry {
	var out []mountEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		root, point := unescapeMount(f[3]), unescapeMount(f[4])
		if !filepath.IsAbs(root) || !filepath.IsAbs(point) {
			continue
		}
		out = append(out, mountEntry{dev: f[2], root: filepath.Clean(root), point: filepath.Clean(point)})
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// aliasesOf are the other paths to p (real, absolute) that the mounts
// make: where another mount shows the same device's directory that holds
// p. Hiding p by its path alone would leave them open.
func aliasesOf(p string, mounts []mountEntry) []string {
	// The mount p is on: the deepest mount point above it, the last
	// mounted of those on the same point.
	on := -1
	for i, m := range mounts {
		if Within(p, m.point) && (on < 0 || len(m.point) >= len(mounts[on].point)) {
			on = i
		}
	}
	if on < 0 {
		return nil
	}
	inFS := filepath.Join(mounts[on].root, strings.TrimPrefix(p, mounts[on].point))
	var out []string
	for i, m := range mounts {
		if i == on || m.dev != mounts[on].dev || !Within(inFS, m.root) {
			continue
		}
		a := filepath.Join(m.point, strings.TrimPrefix(inFS, m.root))
		if a != p && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}
