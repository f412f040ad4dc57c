package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// startsChildren finds the subcommand whatever the order of the words:
// flags before it, a "--" that is a flag's value.
func TestStartsChildren(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"hitl", "exec", "a.yaml"}, true},
		{[]string{"hitl", "--prompt", "jsonl", "exec", "a.yaml"}, true},
		{[]string{"hitl", "--working-dir", "--", "exec", "a.yaml"}, true},
		{[]string{"hitl", "resume", "s"}, true},
		{[]string{"hitl", "mcp"}, true},
		{[]string{"hitl", "version"}, false},
		{[]string{"hitl", "ask", "Deploy?"}, false},
	}
	for _, tt := range tests {
		if got := startsChildren(tt.args); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.args, got, tt.want)
		}
	}
}

// A path the helper could not receive whole (not UTF-8: JSON would change
// it, and a rule on a path that does not exist protects nothing) is
// refused, never run with a view that names something else.
func TestPathNotUTF8IsRefused(t *testing.T) {
	eachMechanism(t, func(t *testing.T, sb *Sandbox) {
		dir := filepath.Join(t.TempDir(), "odd\xffname")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		c := sb.Command(context.Background(), Spec{Path: "/bin/true", Dir: dir, Class: ClassAuto, Writable: []string{dir}})
		err := c.Run()
		if err == nil || !strings.Contains(err.Error(), "not UTF-8") {
			t.Fatalf("a view with a path that is not UTF-8: %v", err)
		}
	})
}
