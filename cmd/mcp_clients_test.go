package cmd_test

// The agent CLIs people run headless, with hitl mcp as their MCP server:
// Claude Code (claude -p) and Codex (codex exec) from npm, at the versions
// testdata/npm/package.json pins, installed by .ci/npm-mcp.sh. Their
// platform packages hold native programs, so the scripts run those
// directly (no node, nothing fetched while the tests run), against the
// fake model servers of internal/fakellm on loopback.

import (
	"os"
	"path/filepath"
	"runtime"

	"github.com/rogpeppe/go-internal/testscript"
)

// npmClient is where the native program of an npm agent CLI is installed,
// "" when it is not.
func npmClient(name string) string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	var path string
	switch name {
	case "claude":
		path = filepath.Join("testdata", "npm", "node_modules", "@anthropic-ai", "claude-code-"+runtime.GOOS+"-"+arch, "claude")
	case "codex":
		triple := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH] + "-unknown-linux-musl"
		if runtime.GOOS == "darwin" {
			triple = map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH] + "-apple-darwin"
		}
		path = filepath.Join("testdata", "npm", "node_modules", "@openai", "codex-"+runtime.GOOS+"-"+arch, "vendor", triple, "bin", "codex")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(abs); err != nil || fi.Mode()&0o111 == 0 {
		return ""
	}
	return abs
}

// clientCondition answers [claudecode] and [codex]: the client is
// installed (.ci/npm-mcp.sh).
func clientCondition(cond string) (ok, known bool) {
	switch cond {
	case "claudecode":
		return npmClient("claude") != "", true
	case "codex":
		return npmClient("codex") != "", true
	}
	return false, false
}

func init() {
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		env.Setenv("CLAUDE", npmClient("claude"))
		env.Setenv("CODEX", npmClient("codex"))
		return nil
	})
}
