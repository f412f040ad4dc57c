package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/tools/mcp"
	"gopkg.in/yaml.v3"
)

// cagentToolsDir is where cagent installs the programs a toolset's
// version: names: DOCKER_AGENT_TOOLS_DIR, else ~/.cagent/tools.
func cagentToolsDir() string {
	if d := os.Getenv("DOCKER_AGENT_TOOLS_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cagent", "tools")
}

// versionOff is a version: that turns cagent's installing off.
func versionOff(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v == "false" || v == "off"
}

// serverProgram is the program a stdio server with version: runs: the
// command found on PATH, else the one cagent installed in its tools
// directory. hitl installs nothing: a program downloaded while a run starts
// is not one a person chose to trust. Found nowhere, the error names the
// package to install.
func serverProgram(ts *config.Toolset) (string, error) {
	if ts.Version == "" || strings.ContainsRune(ts.Command, '/') {
		return ts.Command, nil
	}
	if _, err := lookPath(ts.Command); err == nil {
		return ts.Command, nil
	}
	if versionOff(ts.Version) {
		return "", &mcp.ServerError{Server: ts.Server, What: "cannot start", Err: fmt.Errorf(
			"the program %s is not on PATH (version: %s: nothing is installed for it); install it or give its full path as command", ts.Command, ts.Version)}
	}
	dir := cagentToolsDir()
	if dir != "" {
		p := filepath.Join(dir, "bin", ts.Command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &mcp.ServerError{Server: ts.Server, What: "cannot start", Err: fmt.Errorf(
		"the program %s is not on PATH nor in %s; the agent file names its package, version: %s: install it (hitl installs no program while a run starts; cagent would download it from the aqua registry into %[2]s)",
		ts.Command, filepath.Join(dir, "bin"), ts.Version)}
}

// gatewayConfigFile writes a docker:NAME server's config: as Docker's MCP
// gateway reads it, {NAME: config}, into a file only this user can read
// (the settings may be private), and returns its path and how to remove it.
func gatewayConfigFile(ts *config.Toolset) (path string, remove func(), err error) {
	var v any
	if err := json.Unmarshal(ts.GatewayConfig, &v); err != nil {
		return "", nil, fmt.Errorf("config: %w", err)
	}
	data, err := yaml.Marshal(map[string]any{ts.Docker: v})
	if err != nil {
		return "", nil, fmt.Errorf("config: %w", err)
	}
	dir, err := os.MkdirTemp("", "hitl-mcp-config-")
	if err != nil {
		return "", nil, fmt.Errorf("config: %w", err)
	}
	remove = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		remove()
		return "", nil, fmt.Errorf("config: %w", err)
	}
	return path, remove, nil
}
