// Package exttest builds hitl-ext for tests.
package exttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hitl-dev/hitl/exec/ext"
)

// BuildInto builds hitl-ext into dir and returns its path.
func BuildInto(dir string) (string, error) {
	path := filepath.Join(dir, ext.Program)
	out, err := exec.Command("go", "build", "-o", path, ext.Package).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", ext.Package, err, out)
	}
	return path, nil
}

// Install builds hitl-ext next to the running test binary, where Find
// looks whatever the environment (for a TestMain); it is removed with the
// test binary's directory.
func Install() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return BuildInto(filepath.Dir(self))
}

// Main is a TestMain for a package whose tests need hitl-ext (the google
// provider, the openapi toolset): it is installed next to the test binary
// first.
func Main(m interface{ Run() int }) {
	if _, err := Install(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
