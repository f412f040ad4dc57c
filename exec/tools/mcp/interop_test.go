package mcp

// Interoperation with the reference MCP servers people actually run: the
// official npm packages @modelcontextprotocol/server-everything and
// @modelcontextprotocol/server-filesystem, at the exact versions of
// testdata/npm/package-lock.json. The test installs them there (npm ci) when
// they are missing, runs them with node (never npx: nothing is fetched while
// the tests run), and skips only where Node.js is absent. HITL_SKIP_NPM=1
// skips instead of installing (an offline machine without node_modules).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/internal/procgroup"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

const (
	npmEverything = "@modelcontextprotocol/server-everything"
	npmFilesystem = "@modelcontextprotocol/server-filesystem"
	// npmInstallTimeout bounds `npm ci`.
	npmInstallTimeout = 5 * time.Minute
)

var npmInstall struct {
	once    sync.Once
	node    string
	dir     string
	skip    string // why the interop tests skip
	err     error
	elapsed time.Duration
}

// interopNode returns node's path and the directory of the installed
// packages, installing them first when they are missing or not at the
// pinned versions. Once per test binary.
func interopNode(t *testing.T) (node, dir string) {
	t.Helper()
	n := &npmInstall
	n.once.Do(func() {
		n.node, n.dir, n.skip, n.err = installNPM()
	})
	if n.skip != "" {
		t.Skip(n.skip)
	}
	if n.err != nil {
		t.Fatal(n.err)
	}
	return n.node, n.dir
}

func installNPM() (node, dir, skip string, err error) {
	node, err = osexec.LookPath("node")
	if err != nil {
		return "", "", "MCP interop: node not found; install Node.js 18+ to run it", nil
	}
	out, err := osexec.Command(node, "--version").Output()
	if err != nil {
		return "", "", "", fmt.Errorf("MCP interop: %s --version: %w", node, err)
	}
	if major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".", 2)[0]); major < 18 {
		return "", "", "", fmt.Errorf("MCP interop: node %s is too old: the reference servers need Node.js 18+", bytes.TrimSpace(out))
	}
	dir, err = filepath.Abs(filepath.Join("testdata", "npm"))
	if err != nil {
		return "", "", "", err
	}
	stale, err := npmStale(dir)
	if err != nil {
		return "", "", "", err
	}
	if stale == "" {
		return node, dir, "", nil
	}
	if os.Getenv("HITL_SKIP_NPM") == "1" {
		return "", "", "MCP interop: HITL_SKIP_NPM=1 and " + stale + "; run `npm ci` in " + dir, nil
	}
	npm, err := osexec.LookPath("npm")
	if err != nil {
		return "", "", "MCP interop: npm not found (" + stale + "); install Node.js 18+ with npm to run it", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), npmInstallTimeout)
	defer cancel()
	// --ignore-scripts: no package's install script runs on this machine.
	cmd := osexec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = dir
	cmd.WaitDelay = 10 * time.Second
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	err = cmd.Run()
	npmInstall.elapsed = time.Since(start)
	if ctx.Err() != nil {
		err = fmt.Errorf("no result within %s", npmInstallTimeout)
	}
	if err != nil {
		return "", "", "", fmt.Errorf("MCP interop: `npm ci` in %s (%s) failed: %w\n%s\n(set HITL_SKIP_NPM=1 to skip these tests where the npm registry is unreachable)",
			dir, stale, err, log.String())
	}
	fmt.Fprintf(os.Stderr, "MCP interop: npm ci in %s took %s\n", dir, npmInstall.elapsed.Round(100*time.Millisecond))
	if stale, err := npmStale(dir); err != nil || stale != "" {
		return "", "", "", fmt.Errorf("MCP interop: after npm ci in %s: %s%v", dir, stale, err)
	}
	return node, dir, "", nil
}

// npmStale says why node_modules must be (re)installed: a package missing
// or at another version than package.json pins. "" when it is up to date.
func npmStale(dir string) (string, error) {
	var pins struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err == nil {
		err = json.Unmarshal(raw, &pins)
	}
	if err != nil {
		return "", fmt.Errorf("MCP interop: reading %s: %w", filepath.Join(dir, "package.json"), err)
	}
	for _, pkg := range []string{npmEverything, npmFilesystem} {
		want, ok := pins.Dependencies[pkg]
		if !ok {
			return "", fmt.Errorf("MCP interop: %s does not pin %s", filepath.Join(dir, "package.json"), pkg)
		}
		var have struct{ Version string }
		raw, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
		if err != nil {
			return pkg + " is not installed", nil
		}
		if json.Unmarshal(raw, &have) != nil || have.Version != want {
			return fmt.Sprintf("%s is at %q, not the pinned %s", pkg, have.Version, want), nil
		}
	}
	return "", nil
}

// npmBin is the script a package runs as its command (package.json "bin").
func npmBin(t *testing.T, dir, pkg string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Bin json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatalf("%s/package.json: %v", pkg, err)
	}
	var one string
	var many map[string]string
	switch {
	case json.Unmarshal(meta.Bin, &one) == nil:
	case json.Unmarshal(meta.Bin, &many) == nil && len(many) == 1:
		for _, v := range many {
			one = v
		}
	default:
		t.Fatalf("%s/package.json: expected one bin, got %s", pkg, meta.Bin)
	}
	return filepath.Join(dir, "node_modules", pkg, filepath.FromSlash(one))
}

func approval(t *testing.T, c *Client, name, args string) (exec.Approval, bool) {
	t.Helper()
	a, ok, err := tool(t, c, name).Approval(context.Background(), exec.ToolCall{ID: "call_1", Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Approval(%s): %v", name, err)
	}
	return a, ok
}

func mustCall(t *testing.T, c *Client, name, args string) exec.Result {
	t.Helper()
	res, err := call(t, c, name, args)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

func wantText(t *testing.T, res exec.Result, isError bool, parts ...string) {
	t.Helper()
	if res.IsError != isError {
		t.Errorf("IsError = %v, want %v; text:\n%s", res.IsError, isError, res.Text)
	}
	for _, p := range parts {
		if !strings.Contains(res.Text, p) {
			t.Errorf("result lacks %q:\n%s", p, res.Text)
		}
	}
}

// everythingElicitation is an answer to server-everything's
// trigger-elicitation-request form, valid for its requested schema.
const everythingElicitation = `{"name":"Ada Lovelace","check":true,"email":"ada@example.com",` +
	`"homepage":"https://example.com/ada","birthdate":"1815-12-10","integer":7,"number":2.5,` +
	`"untitledSingleSelectEnum":"Joey","untitledMultipleSelectEnum":["Piano","Drums"],` +
	`"titledSingleSelectEnum":"hero-3","titledMultipleSelectEnum":["fish-2"],"legacyTitledEnum":"pet-2"}`

// testEverything runs the checks every transport of server-everything must
// pass.
func testEverything(t *testing.T, c *Client, a *asker, roots []string) {
	names := map[string]bool{}
	for _, tl := range c.Tools() {
		names[tl.Spec().Name] = true
	}
	for _, n := range []string{"echo", "get-sum", "get-env", "get-roots-list", "trigger-elicitation-request", "trigger-url-elicitation", "gzip-file-as-resource"} {
		if !names[n] {
			t.Fatalf("server-everything lacks the tool %s; it has %v", n, names)
		}
	}

	t.Run("approval follows readOnlyHint", func(t *testing.T) {
		for _, tc := range []struct {
			tool, args string
			asks       bool
		}{
			{"echo", `{"message":"hi"}`, false},                                         // readOnlyHint: true
			{"get-sum", `{"a":1,"b":2}`, false},                                         // readOnlyHint: true
			{"get-env", `{}`, false},                                                    // readOnlyHint: true
			{"trigger-elicitation-request", `{}`, true},                                 // readOnlyHint: false
			{"trigger-url-elicitation", `{"url":"https://example.com"}`, true},          // readOnlyHint: false
			{"gzip-file-as-resource", `{"name":"x","data":"data:text/plain,hi"}`, true}, // readOnlyHint: false
			{"echo", `{"message":"$HITL_SECRET_1"}`, true},                              // a secret placeholder
		} {
			a, asks := approval(t, c, tc.tool, tc.args)
			if asks != tc.asks {
				t.Errorf("%s %s: asks = %v, want %v", tc.tool, tc.args, asks, tc.asks)
			}
			if asks && (a.Server != c.Name() || a.SessionKey != "mcp:"+c.Name()+":"+tc.tool) {
				t.Errorf("%s: approval %+v", tc.tool, a)
			}
			if secret := strings.Contains(tc.args, "HITL_SECRET_"); a.Secret != secret {
				t.Errorf("%s %s: Secret = %v, want %v", tc.tool, tc.args, a.Secret, secret)
			}
		}
	})

	t.Run("echo and get-sum", func(t *testing.T) {
		wantText(t, mustCall(t, c, "echo", `{"message":"hello from hitl"}`), false, "Echo: hello from hitl")
		wantText(t, mustCall(t, c, "get-sum", `{"a":2,"b":40}`), false, "The sum of 2 and 40 is 42.")
		// The server validates the arguments: the model reads its refusal.
		res := mustCall(t, c, "get-sum", `{"a":"two"}`)
		if !res.IsError || res.Text == "" {
			t.Errorf("get-sum with bad arguments: %+v", res)
		}
	})

	t.Run("secrets expanded and masked", func(t *testing.T) {
		res := mustCall(t, c, "echo", `{"message":"token $HITL_SECRET_1"}`)
		wantText(t, res, false, "Echo: token ***")
		if strings.Contains(res.Text, interopToken) {
			t.Errorf("the secret reached the model: %s", res.Text)
		}
	})

	t.Run("roots", func(t *testing.T) {
		// The server asks for the roots ~350ms after the handshake.
		var res exec.Result
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			res = mustCall(t, c, "get-roots-list", `{}`)
			if strings.Contains(res.Text, "file://") {
				break
			}
		}
		for _, r := range roots {
			wantText(t, res, false, "file://"+filepath.ToSlash(r))
		}
	})

	t.Run("form elicitation accepted", func(t *testing.T) {
		a.answer = answer(prompt.Accept, everythingElicitation)
		before := len(a.questions())
		res := mustCall(t, c, "trigger-elicitation-request", `{}`)
		wantText(t, res, false, "User provided the requested information", "- Name: Ada Lovelace",
			"- Agreed to terms: true", "- Email: ada@example.com", "- Birthdate: 1815-12-10",
			"- Favorite Integer: 7", "- Favorite Number: 2.5", `"titledMultipleSelectEnum": [`, `"fish-2"`)
		qs := a.questions()[before:]
		if len(qs) != 1 {
			t.Fatalf("asked %d questions, want 1", len(qs))
		}
		q := qs[0]
		if q.Kind != prompt.KindForm || q.Tool != "trigger-elicitation-request" || q.Server != c.Name() || q.CallID != "call_1" ||
			q.Message != "Please provide inputs for the following fields:" || len(q.Fields) != 13 {
			t.Errorf("question: kind %s tool %s server %s call %s message %q, %d fields", q.Kind, q.Tool, q.Server, q.CallID, q.Message, len(q.Fields))
		}
		// Every field is asked as its kind, titled enums with their titles.
		kinds := map[string]string{}
		for _, f := range q.Fields {
			k := string(f.Question.Kind)
			if f.Question.Multiple {
				k += "+multiple"
			}
			for _, o := range f.Question.Options {
				k += " " + o.ID + "=" + o.Label
			}
			kinds[f.Name] = k
		}
		for name, want := range map[string]string{
			"name":                       "text",
			"check":                      "confirm",
			"integer":                    "text",
			"untitledSingleSelectEnum":   "choice Monica=Monica Rachel=Rachel Joey=Joey Chandler=Chandler Ross=Ross Phoebe=Phoebe",
			"untitledMultipleSelectEnum": "choice+multiple Guitar=Guitar Piano=Piano Violin=Violin Drums=Drums Bass=Bass",
			"titledSingleSelectEnum":     "choice hero-1=Superman hero-2=Green Lantern hero-3=Wonder Woman",
			"titledMultipleSelectEnum":   "choice+multiple fish-1=Tuna fish-2=Salmon fish-3=Trout",
			"legacyTitledEnum":           "choice pet-1=Cats pet-2=Dogs pet-3=Birds pet-4=Fish pet-5=Reptiles",
		} {
			if kinds[name] != want {
				t.Errorf("field %s asked as %q, want %q", name, kinds[name], want)
			}
		}
	})

	t.Run("form elicitation declined and cancelled", func(t *testing.T) {
		a.answer = answer(prompt.Decline, "")
		wantText(t, mustCall(t, c, "trigger-elicitation-request", `{}`), false, "User declined to provide the requested information", `"action": "decline"`)
		a.answer = answer(prompt.Cancel, "")
		wantText(t, mustCall(t, c, "trigger-elicitation-request", `{}`), false, "User cancelled the elicitation dialog", `"action": "cancel"`)
	})

	t.Run("form elicitation answer breaking the schema", func(t *testing.T) {
		// integer is bounded 1..100: nothing that breaks the schema
		// reaches the server, and the run stops.
		a.answer = answer(prompt.Accept, `{"name":"Ada","integer":1000}`)
		_, err := call(t, c, "trigger-elicitation-request", `{}`)
		if err == nil || !strings.Contains(err.Error(), "does not fit the requested schema") {
			t.Fatalf("err = %v, want a schema error", err)
		}
		// The session survives it.
		wantText(t, mustCall(t, c, "echo", `{"message":"still here"}`), false, "Echo: still here")
	})

	t.Run("URL elicitation", func(t *testing.T) {
		for _, tc := range []struct {
			answer func(prompt.Question) (prompt.Answer, error)
			want   string
		}{
			{answer(prompt.Accept, `true`), "User completed the URL elicitation flow"},
			{answer(prompt.Accept, `false`), "User declined to open the URL"},
			{answer(prompt.Decline, ""), "User declined to open the URL"},
			{answer(prompt.Cancel, ""), "User cancelled the URL elicitation"},
		} {
			a.answer = tc.answer
			before := len(a.questions())
			res := mustCall(t, c, "trigger-url-elicitation", `{"url":"https://example.com/consent?x=1","message":"Sign in, please."}`)
			wantText(t, res, false, tc.want)
			qs := a.questions()[before:]
			if len(qs) != 1 || qs[0].Kind != prompt.KindConfirm || !qs[0].Consent.IsConsent() ||
				!strings.Contains(qs[0].Message, "https://example.com/consent?x=1") || !strings.Contains(qs[0].Message, "Sign in, please.") {
				t.Errorf("questions: %+v", qs)
			}
		}
	})

	t.Run("URL elicitation required (-32042)", func(t *testing.T) {
		// The server needs https://modelcontextprotocol.io opened first:
		// hitl asks, calls again, and the retry asks for the URL itself.
		a.answer = answer(prompt.Accept, `true`)
		before := len(a.questions())
		res := mustCall(t, c, "trigger-url-elicitation", `{"url":"https://example.com/after","errorPath":true}`)
		wantText(t, res, false, "User completed the URL elicitation flow", "URL: https://example.com/after")
		qs := a.questions()[before:]
		if len(qs) != 2 || !strings.Contains(qs[0].Message, "https://modelcontextprotocol.io") ||
			!strings.Contains(qs[0].Message, "Open this link to satisfy the prerequisite") || !strings.Contains(qs[1].Message, "https://example.com/after") {
			t.Errorf("questions: %+v", qs)
		}

		a.answer = answer(prompt.Decline, "")
		res = mustCall(t, c, "trigger-url-elicitation", `{"url":"https://example.com/declined","errorPath":true}`)
		wantText(t, res, true, "needs a person to open an address before trigger-url-elicitation can run")
	})
}

const interopToken = "tok-3c1f9e-interop"

func everythingOptions(roots []string) (*asker, Options) {
	a := &asker{answer: answer(prompt.Decline, "")}
	secrets := &prompt.Secrets{}
	secrets.Set(1, interopToken)
	return a, Options{Asker: a, Secrets: secrets, Roots: roots}
}

func TestInteropEverythingStdio(t *testing.T) {
	node, dir := interopNode(t)
	roots := []string{t.TempDir()}
	a, opts := everythingOptions(roots)
	c := start(t, Server{
		Name:    "everything",
		Command: node,
		Args:    []string{npmBin(t, dir, npmEverything), "stdio"},
		Env:     map[string]string{"INTEROP_GIVEN": "given-" + interopToken},
		Timeout: time.Minute,
	}, opts)
	testEverything(t, c, a, roots)

	t.Run("environment", func(t *testing.T) {
		// Only the safe variables and the server's own env reach it, and
		// a secret in what it returns is masked.
		t.Setenv("INTEROP_NOT_GIVEN", "hitl-only")
		c := start(t, Server{Name: "everything-env", Command: node, Args: []string{npmBin(t, dir, npmEverything), "stdio"},
			Env: map[string]string{"INTEROP_GIVEN": "given-" + interopToken}}, opts)
		res := mustCall(t, c, "get-env", `{}`)
		wantText(t, res, false, `"INTEROP_GIVEN": "given-***"`, `"PATH"`)
		if strings.Contains(res.Text, interopToken) || strings.Contains(res.Text, "INTEROP_NOT_GIVEN") {
			t.Errorf("get-env shows what it must not:\n%s", res.Text)
		}
	})

	t.Run("close stops node", func(t *testing.T) {
		c := start(t, Server{Name: "everything-close", Command: node, Args: []string{npmBin(t, dir, npmEverything), "stdio"}}, Options{})
		pid := c.proc.cmd.Pid()
		if err := c.Close(); err != nil {
			t.Logf("Close: %v", err)
		}
		if procgroup.Alive(pid) {
			t.Errorf("node (pid %d) still runs after Close", pid)
		}
	})
}

// httpEverything runs server-everything over HTTP (streamableHttp or sse)
// on a free port until the test ends, and returns its base URL.
func httpEverything(t *testing.T, node, dir, transport string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	// Started like a stdio server (own process group, stopped on Close),
	// but spoken to over HTTP.
	p, _, err := startProcess(Server{Command: node, Args: []string{npmBin(t, dir, npmEverything), transport}, Env: map[string]string{"PORT": port}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.stop() })
	base := "http://127.0.0.1:" + port
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if p.hasExited() {
			t.Fatalf("server-everything %s exited: %v\n%s", transport, p.exitError(), p.stderr.Tail(20))
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s does not listen on %s:\n%s", transport, port, p.stderr.Tail(20))
		}
		if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
			conn.Close()
			return base
		}
	}
}

func TestInteropEverythingStreamable(t *testing.T) {
	node, dir := interopNode(t)
	base := httpEverything(t, node, dir, "streamableHttp")
	roots := []string{t.TempDir()}
	a, opts := everythingOptions(roots)
	opts.HTTPClient = &http.Client{}
	c := start(t, Server{Name: "everything", URL: base + "/mcp", Timeout: time.Minute}, opts)
	testEverything(t, c, a, roots)
}

func TestInteropEverythingSSE(t *testing.T) {
	node, dir := interopNode(t)
	base := httpEverything(t, node, dir, "sse")
	roots := []string{t.TempDir()}
	a, opts := everythingOptions(roots)
	c := start(t, Server{Name: "everything", URL: base + "/sse", Transport: TransportSSE, Timeout: time.Minute}, opts)
	testEverything(t, c, a, roots)
}
