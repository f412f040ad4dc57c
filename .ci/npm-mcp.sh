#!/usr/bin/env bash
# CI: install the reference MCP servers that exec/tools/mcp/interop_test.go
# runs (@modelcontextprotocol/server-everything and server-filesystem, at the
# exact versions of exec/tools/mcp/testdata/npm/package-lock.json) into
# exec/tools/mcp/testdata/npm/node_modules (git-ignored). The test installs
# them itself when they are missing; running this first keeps the download
# out of `go test`'s time and shows npm's output on its own.
#
# And the agent CLIs that testdata/script/mcp_claude_code.txtar and
# mcp_codex.txtar run with hitl mcp (@anthropic-ai/claude-code and
# @openai/codex, at the exact versions of cmd/testdata/npm/package-lock.json)
# into cmd/testdata/npm/node_modules. Their platform packages hold native
# programs, which the scripts run directly; without them the scripts skip.
#
# npm's cache is $npm_config_cache when set, else npm's default (~/.npm):
# cache that directory between CI runs to install without the network.
# Without node/npm this does nothing: the interop tests then skip.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "npm-mcp: node or npm not found; the MCP interop tests will skip" >&2
  exit 0
fi
echo "npm-mcp: node $(node --version), npm $(npm --version), cache $(npm config get cache 2>/dev/null)"
bound=()
if command -v timeout >/dev/null 2>&1; then
  bound=(timeout 600)
fi
# --ignore-scripts: no package's install script runs.
for dir in exec/tools/mcp/testdata/npm cmd/testdata/npm; do
  ${bound[@]+"${bound[@]}"} npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts
done
