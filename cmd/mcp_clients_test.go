package cmd_test

// The agent CLIs people run headless, with hitl mcp as their MCP server:
// Claude Code (claude -p) and Codex (codex exec) from npm, at the versions
// testdata/npm/package.json pins, installed by .ci/npm-mcp.sh. Their
// platform packages hold native programs, so the scripts run those
// directly (no node, nothing fetched while the tests run), against the
// fake model servers of internal/fakellm on loopback.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	scriptCmds["mcpcall"] = cmdMcpCall
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		env.Setenv("CLAUDE", npmClient("claude"))
		env.Setenv("CODEX", npmClient("codex"))
		return nil
	})
}

// cmdMcpCall is an MCP client of a server program, for scripts:
//
//	mcpcall TOOL ARGS_JSON -- PROGRAM ARGS...
//	    call TOOL once; its result's text goes to stdout, and an error
//	    result fails unless negated (! mcpcall)
//	mcpcall -leave-when FILE TOOL ARGS_JSON -- PROGRAM ARGS...
//	    call TOOL, and once FILE exists drop the connection, as a client
//	    process that exits does; mcpcall returns when the server has exited
//	mcpcall -term-when FILE TOOL ARGS_JSON -- PROGRAM ARGS...
//	    the same, but send the server SIGTERM instead
func cmdMcpCall(ts *testscript.TestScript, neg bool, args []string) {
	leaveWhen, term := "", false
	if len(args) > 1 && (args[0] == "-leave-when" || args[0] == "-term-when") {
		leaveWhen, term, args = ts.MkAbs(args[1]), args[0] == "-term-when", args[2:]
	}
	if len(args) < 4 || args[2] != "--" {
		ts.Fatalf("usage: mcpcall [-leave-when FILE] TOOL ARGS_JSON -- PROGRAM ARGS...")
	}
	tool, callArgs, argv := args[0], args[1], args[3:]
	prog, err := lookPathIn(argv[0], ts.Getenv("PATH"))
	ts.Check(err)
	c := osexec.Command(prog, argv[1:]...)
	c.Dir = ts.MkAbs(".")
	c.Env = scriptEnv(ts)
	c.Stderr = ts.Stderr()
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no terminal to ask on
	in, err := c.StdinPipe()
	ts.Check(err)
	out, err := c.StdoutPipe()
	ts.Check(err)
	ts.Check(c.Start())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpcall"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: out, Writer: in}, nil)
	if err != nil {
		_ = c.Process.Kill()
		_ = c.Wait()
		ts.Fatalf("mcpcall: connect: %v", err)
	}
	if leaveWhen != "" {
		go func() {
			_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(callArgs)})
		}()
		deadline := time.Now().Add(time.Minute)
		for {
			if _, err := os.Stat(leaveWhen); err == nil {
				break
			}
			if time.Now().After(deadline) {
				_ = c.Process.Kill()
				ts.Fatalf("mcpcall: %s never appeared", leaveWhen)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if term {
			_ = c.Process.Signal(syscall.SIGTERM)
		} else {
			in.Close()
			out.Close()
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			code := 0
			if ee, ok := err.(*osexec.ExitError); ok {
				code = ee.ExitCode()
			}
			fmt.Fprintf(ts.Stdout(), "left; the server exited with %d\n", code)
		case <-time.After(time.Minute):
			_ = c.Process.Kill()
			ts.Fatalf("mcpcall: the server went on after the client left")
		}
		return
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(callArgs)})
	cs.Close()
	in.Close()
	_ = c.Wait()
	if err != nil {
		if neg {
			fmt.Fprintf(ts.Stdout(), "error: %v\n", err)
			return
		}
		ts.Fatalf("mcpcall %s: %v", tool, err)
	}
	for _, ct := range res.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			fmt.Fprintln(ts.Stdout(), t.Text)
		}
	}
	if res.IsError != neg {
		ts.Fatalf("mcpcall %s: isError %v", tool, res.IsError)
	}
}

// scriptEnv is the script's environment, for a program it starts.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "XDG_STATE_HOME", "HITL_SESSION_KEY", "HITL_APPROVER_SECRET"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func lookPathIn(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in the script's PATH", name)
}
