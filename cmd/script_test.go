package cmd_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/hitl-dev/hitl/cmd"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "update testscript golden files (cmp) in place")

func TestMain(m *testing.M) {
	os.Exit(testscript.RunMain(m, map[string]func() int{"hitl": cmd.Main}))
}

func TestScripts(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "../testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("CI", "")
			env.Setenv("HITL_PROMPT", "")
			env.Setenv("XDG_STATE_HOME", env.WorkDir+"/.state")
			// HITL_REPO is the source tree, for scripts that run the
			// files it ships (agents/, docs/pre-push).
			env.Setenv("HITL_REPO", repo)
			return nil
		},
	})
}
