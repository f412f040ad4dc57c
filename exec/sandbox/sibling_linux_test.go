package sandbox

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// A command cannot read a sibling's environment (a secret) nor
// signal it, through the /proc it sees.
func TestCommandCannotReadASiblingsEnvironment(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		for _, class := range []Class{ClassAuto, ClassApproved} {
			dir := t.TempDir()
			a := sb.Command(context.Background(), Spec{Path: "/bin/sleep", Args: []string{"20"}, Env: []string{"HITL_SECRET_1=hunter2-sibling"}, Dir: dir, Class: class, Writable: []string{dir}})
			if err := a.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			var out bytes.Buffer
			script := `for d in /proc/[0-9]*; do
  c=$(cat $d/comm 2>/dev/null)
  [ "$c" = sleep ] || continue
  p=${d#/proc/}
  echo "sibling $p environ: $(tr '\0' ' ' < $d/environ 2>&1)"
  echo "sibling $p mem: $(head -c1 $d/mem 2>&1 | od -c | head -1)"
  kill -9 $p 2>&1; echo "kill rc=$?"
done`
			b := sb.Command(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", script}, Dir: dir, Class: class, Writable: []string{dir}, Stdout: &out, Stderr: &out})
			if err := b.Run(); err != nil {
				t.Logf("b: %v", err)
			}
			t.Logf("class %v:\n%s", class, out.String())
			if strings.Contains(out.String(), "hunter2") {
				t.Errorf("a command read a sibling's secret")
			}
			if a.Exited() {
				t.Errorf("a command killed its sibling")
			}
			a.Kill()
			_ = a.Wait()
		}
	})
}
