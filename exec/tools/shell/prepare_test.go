package shell

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/internal/proctest"
)

// The run's sandbox Prepare starts, before any toolset is built, is the
// one the lines of every shell toolset of the run run in unasked: no line
// starts another (what hitl has started is still the one Prepare did),
// and the run's temp dir, their TMPDIR, goes with the run.
func TestPrepareStartsTheSandboxLinesRunIn(t *testing.T) {
	sb := testSandbox(t)
	if m := sb.Mechanism(); (m != sandbox.MechLayered && m != sandbox.MechLandlock) || strings.Contains(sb.Why, "sandbox of its own") {
		t.Skipf("no run's sandbox here (%s): %s", m, sb.Why)
	}
	c, err := permissions.New([]string{"shell:cmd=/bin/true", "shell:cmd=/usr/bin/env"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Sandbox: sb, Permissions: c, BaseDir: t.TempDir()}
	before := proctest.Children(t)
	Prepare(o)
	var started []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if started = proctest.Children(t); len(started) > len(before) {
			break
		}
	}
	if len(started) <= len(before) {
		t.Fatal("Prepare started no sandbox")
	}
	var tmp []string
	for _, tool := range []*Tool{New(o), New(o)} { // two toolsets of the run
		if res, err := tool.Call(context.Background(), toolCall("/bin/true")); err != nil || res.IsError {
			t.Fatalf("%v %s", err, res.Text)
		}
		res, err := tool.Call(context.Background(), toolCall("/usr/bin/env"))
		if err != nil || res.IsError {
			t.Fatalf("%v %s", err, res.Text)
		}
		for _, line := range strings.Split(res.Text, "\n") {
			if v, ok := strings.CutPrefix(line, "TMPDIR="); ok {
				tmp = append(tmp, v)
			}
		}
	}
	if after := proctest.Children(t); !slices.Equal(after, started) {
		t.Errorf("the lines started another sandbox: hitl's children were %v after Prepare, %v after the lines", started, after)
	}
	if len(tmp) != 2 || tmp[0] != tmp[1] || !filepath.IsAbs(tmp[0]) {
		t.Fatalf("the toolsets' TMPDIR: %q", tmp)
	}
	if _, err := os.Stat(tmp[0]); err != nil {
		t.Errorf("the run's temp dir: %v", err)
	}
	sb.Close()
	if _, err := os.Stat(tmp[0]); !os.IsNotExist(err) {
		t.Errorf("the run's temp dir %s outlived the run: %v", tmp[0], err)
	}
}

// Toolsets of a run with other writable roots get other TMPDIRs: a line
// of one cannot plant a link where the other's lines write, to have them
// write where it may not.
func TestToolsetsOfOtherRootsHaveOtherTempDirs(t *testing.T) {
	sb := testSandbox(t)
	c, err := permissions.New([]string{"shell:cmd=/usr/bin/env", "shell:cmd=/usr/bin/touch *"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tmpOf := func(tool *Tool) string {
		res, err := tool.Call(context.Background(), toolCall("/usr/bin/env"))
		if err != nil || res.IsError {
			t.Fatalf("%v %s", err, res.Text)
		}
		for _, line := range strings.Split(res.Text, "\n") {
			if v, ok := strings.CutPrefix(line, "TMPDIR="); ok {
				return v
			}
		}
		t.Fatalf("no TMPDIR in %q", res.Text)
		return ""
	}
	a := New(Options{Sandbox: sb, Permissions: c, BaseDir: t.TempDir()})
	b := New(Options{Sandbox: sb, Permissions: c, BaseDir: t.TempDir()})
	ta, tb := tmpOf(a), tmpOf(b)
	if ta == tb {
		t.Fatalf("two roots share the TMPDIR %s", ta)
	}
	res, err := a.Call(context.Background(), toolCall("/usr/bin/touch "+filepath.Join(tb, "planted")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tb, "planted")); err == nil {
		t.Errorf("a line of one root wrote in another root's TMPDIR: %s", res.Text)
	}
}
