package cmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// A command named first is built alone (its siblings' flags and help are
// start-up work hitl ask and hitl version do not need), and it is the same
// command as in the whole tree: same help, same subcommands, same flags.
// Anything else (help, completion, a typo, a flag first) gets every command.
func TestRootBuildsOnlyTheCommandNamed(t *testing.T) {
	names := func(root *cobra.Command) []string {
		var out []string
		for _, c := range root.Commands() {
			out = append(out, c.Name())
		}
		return out
	}
	help := func(root *cobra.Command, args ...string) string {
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append(args, "--help"))
		if err := root.Execute(); err != nil {
			t.Fatalf("%v --help: %v", args, err)
		}
		return out.String()
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			alone := newCmdRootFor(testIO(), []string{c.name, "x"})
			if got := names(alone); len(got) != 1 || got[0] != c.name {
				t.Fatalf("hitl %s builds %v, want only %s", c.name, got, c.name)
			}
			whole := NewCmdRoot(testIO())
			sub, _, err := whole.Find([]string{c.name})
			if err != nil {
				t.Fatal(err)
			}
			paths := [][]string{{c.name}}
			for _, s := range sub.Commands() {
				paths = append(paths, []string{c.name, s.Name()})
			}
			for _, p := range paths {
				a, w := help(newCmdRootFor(testIO(), p), p...), help(NewCmdRoot(testIO()), p...)
				if a != w {
					t.Errorf("hitl %s --help differs built alone:\n%s\nin the whole tree:\n%s", strings.Join(p, " "), a, w)
				}
			}
		})
	}
	for _, args := range [][]string{nil, {"help"}, {"completion", "bash"}, {"__complete", "e"}, {"exce"}, {"--help"}, {"answers"}} {
		root := newCmdRootFor(testIO(), args)
		if got, want := len(root.Commands()), len(commands)+2; got != want { // + the answers topic, completion
			t.Errorf("%q builds %d commands %v, want all %d", args, got, names(root), want)
		}
	}
}
