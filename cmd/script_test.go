package cmd_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/cmd"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "update testscript golden files (cmp) in place")

// scriptSetups run in each script's Setup, in the test process: a feature's
// test file appends to it in init (e.g. to start a server for its scripts).
var scriptSetups []func(*testscript.Env) error

// mainCleanups run when the tests are done (what scriptSetups made once).
var mainCleanups []func()

func TestMain(m *testing.M) {
	code := testscript.RunMain(m, map[string]func() int{"hitl": cmd.Main, "attack": attackMain})
	for _, f := range mainCleanups {
		f()
	}
	os.Exit(code)
}

// scriptCmds are the commands testscripts have besides testscript's own;
// other files add theirs in init.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"jsonlines":   cmdJSONLines,
	"locksession": cmdLockSession,
	"exitcode":    cmdExitCode,
	"llm":         cmdLLM,
	"toolresult":  cmdToolResult,
}

func TestScripts(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Condition:     condition,
		Dir:           "../testdata/script",
		UpdateScripts: *update,
		Cmds:          scriptCmds,
		Setup: func(env *testscript.Env) error {
			env.Setenv("CI", "")
			env.Setenv("HITL_PROMPT", "")
			env.Setenv("XDG_STATE_HOME", env.WorkDir+"/.state")
			// HITL_REPO is the source tree, for scripts that run the
			// files it ships (agents/, docs/pre-push).
			env.Setenv("HITL_REPO", repo)
			examples, err := filepath.Abs("../agents")
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", examples)
			setupLLM(env)
			for _, setup := range scriptSetups {
				if err := setup(env); err != nil {
					return err
				}
			}
			return nil
		},
	})
}

// cmdJSONLines checks that every line of a file (stdout, stderr or a path) is
// a JSON object with a type, the first of type args[1] and the last of type
// args[2]: jsonlines stdout run.started run.finished
func cmdJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonlines FILE FIRST LAST")
	}
	var text string
	switch args[0] {
	case "stdout", "stderr":
		text = ts.ReadFile(args[0])
	default:
		text = ts.ReadFile(args[0])
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var types []string
	for i, line := range lines {
		var ev struct {
			Type string `json:"type"`
			Time string `json:"time"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type == "" || ev.Time == "" {
			ts.Fatalf("line %d is not a JSON event with type and time: %q (%v)", i+1, line, err)
		}
		types = append(types, ev.Type)
	}
	if types[0] != args[1] || types[len(types)-1] != args[2] {
		ts.Fatalf("events %v: want first %s and last %s", types, args[1], args[2])
	}
}

// cmdLockSession holds a session open, as a running hitl would, until the
// script ends: locksession FILE
func cmdLockSession(ts *testscript.TestScript, neg bool, args []string) {
	key, err := session.LoadKey(ts.Getenv)
	if err != nil {
		ts.Fatalf("locksession: %v", err)
	}
	j, _, err := session.Open(ts.MkAbs(args[0]), key)
	if err != nil {
		ts.Fatalf("locksession: %v", err)
	}
	ts.Defer(func() { j.Close() })
}

// cmdExitCode runs hitl and checks its exit code, which testscript's exec
// does not: exitcode N ARGS...
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N hitl ARGS...")
	}
	err := ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *osexec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if want := args[0]; strconv.Itoa(got) != want {
		ts.Fatalf("exit code %d, want %s", got, want)
	}
}

// condition adds [controllingtty]: the tests run with a controlling
// terminal (go test from an interactive shell), where /dev/tty can be opened
// and a prompt on it would wait for a person.
func condition(cond string) (bool, error) {
	if cond == "npmmcp" {
		// The reference MCP servers are installed (.ci/npm-mcp.sh).
		_, err := os.Stat("../exec/tools/mcp/testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
		return err == nil, nil
	}
	if ok, known := clientCondition(cond); known {
		return ok, nil
	}
	if mech, ok := strings.CutPrefix(cond, "sandbox:"); ok {
		return sandboxCondition(mech)
	}
	if cond != "controllingtty" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return false, nil
	}
	f.Close()
	return true, nil
}
