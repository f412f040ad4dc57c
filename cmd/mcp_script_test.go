package cmd_test

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/hitl-dev/hitl/exec/tools/mcp/mcptest"
	"github.com/rogpeppe/go-internal/testscript"
)

// The MCP test server (exec/tools/mcp/mcptest) for the scripts: the stdio
// command mcptest-server, built once and put on PATH (its path is also
// $MCPTEST), and a streamable HTTP / SSE server per script at $MCP_URL and
// $MCP_SSE, and its stateless endpoint (protocol 2026-07-28) at
// $MCP_STATELESS.
var mcpServer struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func init() {
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		mcpServer.once.Do(func() {
			mcpServer.dir, mcpServer.err = os.MkdirTemp("", "hitl-mcptest-")
			if mcpServer.err == nil {
				mcpServer.path, mcpServer.err = mcptest.BuildInto(mcpServer.dir)
			}
		})
		if mcpServer.err != nil {
			return mcpServer.err
		}
		env.Setenv("MCPTEST", mcpServer.path)
		env.Setenv("PATH", filepath.Dir(mcpServer.path)+string(os.PathListSeparator)+env.Getenv("PATH"))
		h := mcptest.Serve(mcptest.Options{})
		env.Defer(h.Close)
		env.Setenv("MCP_URL", h.URL)
		env.Setenv("MCP_SSE", h.SSE)
		env.Setenv("MCP_STATELESS", h.Stateless) // the endpoint on protocol 2026-07-28
		return nil
	})
	mainCleanups = append(mainCleanups, func() {
		if mcpServer.dir != "" {
			os.RemoveAll(mcpServer.dir)
		}
	})
}
