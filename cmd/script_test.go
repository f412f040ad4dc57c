package cmd_test

import (
	"flag"
	"os"
	"testing"

	"github.com/hitl-dev/hitl/cmd"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "update testscript golden files (cmp) in place")

// scriptSetups run in each script's Setup, in the test process: a feature's
// test file appends to it in init (e.g. to start a server for its scripts).
var scriptSetups []func(*testscript.Env) error

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
			for _, setup := range scriptSetups {
				if err := setup(env); err != nil {
					return err
				}
			}
			return nil
		},
	})
}
