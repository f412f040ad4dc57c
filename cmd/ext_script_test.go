package cmd_test

import (
	"os"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hitl-dev/hitl/exec/ext/exttest"
)

// hitlExt is hitl-ext, built once and put on the scripts' PATH (where a
// user's go install puts it too): the google provider and the openapi
// toolset run in it. $HITL_EXT_DIR is its directory, $PATH_WITHOUT_EXT
// the PATH without it.
var hitlExt struct {
	once sync.Once
	dir  string
	err  error
}

func init() {
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		hitlExt.once.Do(func() {
			hitlExt.dir, hitlExt.err = os.MkdirTemp("", "hitl-ext-")
			if hitlExt.err == nil {
				_, hitlExt.err = exttest.BuildInto(hitlExt.dir)
			}
		})
		if hitlExt.err != nil {
			return hitlExt.err
		}
		env.Setenv("HITL_EXT_DIR", hitlExt.dir)
		env.Setenv("PATH_WITHOUT_EXT", env.Getenv("PATH"))
		env.Setenv("PATH", hitlExt.dir+string(os.PathListSeparator)+env.Getenv("PATH"))
		return nil
	})
	mainCleanups = append(mainCleanups, func() {
		if hitlExt.dir != "" {
			os.RemoveAll(hitlExt.dir)
		}
	})
}
