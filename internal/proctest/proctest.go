// Package proctest looks at the processes a test has started.
package proctest

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Children are the pids of this process's children (of all its threads),
// sorted.
func Children(t testing.TB) []int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range tasks {
		data, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(w); err == nil {
				out = append(out, pid)
			}
		}
	}
	slices.Sort(out)
	return out
}
