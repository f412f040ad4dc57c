package cmd_test

import (
	"flag"
	"os"
	"testing"

	"github.com/hitl-dev/hitl/cmd"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "update testscript golden files (cmp) in place")

func TestMain(m *testing.M) {
	os.Exit(testscript.RunMain(m, map[string]func() int{"hitl": cmd.Main}))
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "../testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("CI", "")
			env.Setenv("HITL_PROMPT", "")
			env.Setenv("XDG_STATE_HOME", env.WorkDir+"/.state")
			return nil
		},
	})
}
