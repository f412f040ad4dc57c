package cmd_test

import (
	"net/http/httptest"

	"github.com/hitl-dev/hitl/exec/tools/remote/remotetest"
	"github.com/rogpeppe/go-internal/testscript"
)

// Each script gets its own example tool server (seed 000), started by the
// test process; agent files reach it as ${TOOLSERVER_URL}.
func init() {
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		tools := remotetest.New()
		srv := httptest.NewServer(tools)
		env.Defer(func() {
			srv.Close()
			tools.Close()
		})
		env.Setenv("TOOLSERVER_URL", srv.URL)
		return nil
	})
}
