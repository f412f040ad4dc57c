package remote_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/config"
	hexec "github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/tools/remote"
	"github.com/hitl-dev/hitl/prompt"
)

// The example in testdata/toolserver (which go test ./... does not build)
// compiles, runs, and serves write_file end to end.
func TestExampleToolServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "toolserver")
	build := exec.Command(gobin, "build", "-o", bin, "../../../testdata/toolserver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the address: %v", err)
	}
	url := strings.TrimSpace(line[strings.Index(line, "http://"):])

	cb := remote.NewServer()
	defer cb.Close()
	asker := &fakeAsker{answer: answer(prompt.Accept, `"Yes for session"`, prompt.SourceTTY)}
	list, err := remote.New(&config.Toolset{Type: "remote", URL: url, Tools: []config.RemoteTool{{Name: "write_file"}}},
		remote.Options{RunID: "r", Server: cb, Asker: asker})
	if err != nil {
		t.Fatal(err)
	}
	call := func(id string) hexec.Result {
		res, err := list[0].Call(ctx, hexec.ToolCall{ID: id, Name: "write_file", Arguments: json.RawMessage(`{"path":"a.txt","content":"hi"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call("c1"); res.Text != `choice 0 "Yes for session": write of 2 bytes to a.txt allowed` {
		t.Errorf("first call: %+v", res)
	}
	// The tool remembers "Yes for session" itself; hitl caches nothing.
	if res := call("c2"); res.Text != "write of 2 bytes to a.txt allowed (Yes for session, remembered by the tool)" {
		t.Errorf("second call: %+v", res)
	}
	if n := len(asker.asked()); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
}
