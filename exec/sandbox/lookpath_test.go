package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Empty and relative PATH entries are never searched: they would find a
// program planted in the working directory.
func TestSearchPathSkipsEmptyAndRelativeEntries(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want []string
	}{
		{nil, []string{"/usr/local/bin", "/usr/bin", "/bin"}},
		{[]string{"PATH=/usr/bin:/bin:"}, []string{"/usr/bin", "/bin"}},
		{[]string{"PATH=:/usr/bin"}, []string{"/usr/bin"}},
		{[]string{"PATH=/usr/bin::/bin"}, []string{"/usr/bin", "/bin"}},
		{[]string{"PATH=.:bin:./x:/opt/bin"}, []string{"/opt/bin"}},
		{[]string{"PATH="}, nil},
		{[]string{"PATH=/a", "PATH=/b:"}, []string{"/b"}},
	} {
		if got := searchPath(tc.env); !slices.Equal(got, tc.want) {
			t.Errorf("searchPath(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestLookPathIgnoresProgramInWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "planted"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, path := range []string{"PATH=/usr/bin:", "PATH=:/usr/bin", "PATH=.", "PATH=" + filepath.Base(dir)} {
		if p, err := LookPath("planted", dir, []string{path}); err == nil {
			t.Errorf("%s: found %s", path, p)
		}
	}
	// Named with a slash, it is the author's choice and found.
	if _, err := LookPath("./planted", dir, nil); err != nil {
		t.Errorf("./planted: %v", err)
	}
}
