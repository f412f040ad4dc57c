package sandbox

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
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

// The state dir's parents are mount points (they cannot be renamed away)
// where a child could rename one: inside a directory it may write, or
// anywhere for a child that writes where the user may. On the read-only
// root a child renames nothing, and bwrap is not asked for mounts that
// only cost time.
func TestStateParentsMountedWhereRenamable(t *testing.T) {
	tests := []struct {
		name     string
		class    Class
		writable []string
		want     []string // the parents bound, with bwrap's operation
	}{
		{"outside the working dir", ClassAuto, []string{"/w/project"}, nil},
		{"inside the working dir", ClassAuto, []string{"/w"}, []string{"--ro-bind /w/st", "--ro-bind /w/st/x"}},
		{"the working dir is a parent", ClassAuto, []string{"/w/st"}, []string{"--ro-bind /w/st/x"}},
		{"approved", ClassApproved, nil, []string{"--bind /w", "--bind /w/st", "--bind /w/st/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := bwrapMounts(view{Class: tt.class, StateDir: "/w/st/x/hitl", Writable: tt.writable}, nil)
			var got []string
			for i := 0; i+2 < len(args); i++ {
				op, src := args[i], args[i+1]
				if (op == "--ro-bind" || op == "--bind") && src != "/" && Within("/w/st/x/hitl", src) && src != "/w/st/x/hitl" && !slices.Contains(tt.writable, src) {
					got = append(got, op+" "+src)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("the state dir's parents bound: %q, want %q\nargs: %q", got, tt.want, args)
			}
		})
	}
}

// The links on the way to the state dir are named as each run meets
// them: a chain of links, each by its directory's real path.
func TestLinksOnTheWay(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a", "b", "c/d"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../b", filepath.Join(root, "a", "l1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "c"), filepath.Join(root, "b", "l2")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want []string
	}{
		{filepath.Join(root, "c", "d", "hitl"), nil},
		{filepath.Join(root, "a", "l1", "l2", "d", "hitl"), []string{filepath.Join(root, "a", "l1"), filepath.Join(root, "b", "l2")}},
	}
	for _, tt := range tests {
		if got := linksOnTheWay(tt.path); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.path, got, tt.want)
		}
	}
}

// Below Landlock, bwrap's mounts alone keep the kernel's settings from
// every child, and all of /proc from a command nobody saw (which Landlock
// grants nothing there and which makes no namespace): any other class
// still writes its own /proc/self (a rootless container's uid_map).
func TestBwrapMountsKeepProcReadOnly(t *testing.T) {
	bwrap, err := osexec.LookPath("bwrap")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs bwrap and root (only root may write /proc/sys)")
	}
	for _, tc := range []struct {
		class      Class
		procSelfOK bool
	}{{ClassAuto, false}, {ClassApproved, true}} {
		t.Run(tc.class.String(), func(t *testing.T) {
			dir := t.TempDir()
			args := bwrapMounts(view{Class: tc.class, Writable: []string{dir}}, nil)
			// The same value back: writing changes nothing.
			script := `v=$(cat /proc/sys/kernel/msgmax); if (echo "$v" > /proc/sys/kernel/msgmax) 2>/dev/null; then echo sys:written; else echo sys:refused; fi
o=$(cat /proc/self/oom_score_adj); if (echo "$o" > /proc/self/oom_score_adj) 2>/dev/null; then echo self:written; else echo self:refused; fi`
			out, err := osexec.Command(bwrap, append(args[1:], "--", "/bin/sh", "-c", script)...).CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := "sys:refused\nself:refused\n"
			if tc.procSelfOK {
				want = "sys:refused\nself:written\n"
			}
			if string(out) != want {
				t.Errorf("got %q, want %q", out, want)
			}
		})
	}
}
