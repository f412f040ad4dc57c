package sandbox

import (
	"bytes"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
)

// hideEnvironArg is the child's argv[1], which a re-exec keeps (its
// environment is then only the memfd's number until HideEnviron runs);
// argv[2] is what it does: "report", or, for the benchmark, "in-place"
// and "re-exec" (hide, then exit).
const hideEnvironArg = "hide-environ-child"

func init() {
	if len(os.Args) > 3 && os.Args[1] == hideEnvironArg {
		os.Exit(hideEnvironChild(os.Args[2]))
	}
}

// hideEnvironChild says it started (once per start: a re-exec says it
// twice), hides its environment as `hitl exec` does, and prints what
// /proc/self/environ then holds, what it still reads of its secret, and
// what a child it starts with its environment reads.
func hideEnvironChild(mode string) int {
	args := []string{os.Args[0], hideEnvironArg, mode, "exec"}
	switch mode {
	case "in-place":
		HideEnviron(args)
		return 0
	case "re-exec":
		if _, restored := os.LookupEnv(environFD); !restored {
			reexecHidden(args)
			return 1 // not re-executed
		}
		HideEnviron(args)
		return 0
	}
	fmt.Println("started")
	HideEnviron(args)
	block, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		fmt.Println("environ:", err)
		return 1
	}
	fmt.Printf("environ: %d bytes, text %q\n", len(block), bytes.Trim(block, "\x00"))
	fmt.Println("getenv:", os.Getenv("HITL_TEST_SECRET"))
	out, err := osexec.Command("/bin/sh", "-c", `echo "child: $HITL_TEST_SECRET $HITL_TEST_EQUALS"`).Output()
	if err != nil {
		fmt.Println("child:", err)
		return 1
	}
	fmt.Print(string(out))
	return 0
}

// hitl exec hides its environment in place: it starts once (no second
// start of the whole program), its environment block reads as zeros, and
// the variables are still its own and its children's. A HITL_ENVIRON_FD
// that is not hitl's own hand-over (a sealed memfd) hides nothing less.
func TestHideEnvironInPlace(t *testing.T) {
	for _, extra := range []string{"", environFD + "=x", environFD + "=9", environFD + "=2"} {
		t.Run(extra, func(t *testing.T) {
			cmd := osexec.Command(os.Args[0], hideEnvironArg, "report", "exec")
			cmd.Env = append(os.Environ(), "HITL_TEST_SECRET=sk-hidden-0123456789", "HITL_TEST_EQUALS=a=b=c")
			if extra != "" {
				cmd.Env = append(cmd.Env, extra)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got := string(out)
			if n := strings.Count(got, "started\n"); n != 1 {
				t.Errorf("started %d times (a re-exec starts the program twice):\n%s", n, got)
			}
			if !strings.Contains(got, `text ""`) || strings.Contains(got, "environ: 0 bytes") {
				t.Errorf("the environment block still holds text (or was not read):\n%s", got)
			}
			if strings.Contains(got, "HITL_TEST_SECRET=") {
				t.Errorf("the secret is in the environment block:\n%s", got)
			}
			for _, want := range []string{"getenv: sk-hidden-0123456789\n", "child: sk-hidden-0123456789 a=b=c\n"} {
				if !strings.Contains(got, want) {
					t.Errorf("want %q in:\n%s", want, got)
				}
			}
		})
	}
}

// The environment block is found in /proc/self/stat whatever the
// command name holds (spaces, parentheses).
func TestEnvironBlockIsFound(t *testing.T) {
	start, end, err := environBlock()
	if err != nil {
		t.Fatal(err)
	}
	if end <= start {
		t.Fatalf("block [%#x, %#x)", start, end)
	}
	block, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(block)) != end-start {
		t.Errorf("block of %d bytes, /proc/self/environ %d", end-start, len(block))
	}
}

// BenchmarkHideEnviron is what hiding its environment costs a process
// that starts children (hitl exec): the whole process, started, hidden
// and ended, in place against a re-exec with a memfd.
func BenchmarkHideEnviron(b *testing.B) {
	for _, mode := range []string{"in-place", "re-exec"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				cmd := osexec.Command(os.Args[0], hideEnvironArg, mode, "exec")
				cmd.Env = append(os.Environ(), "HITL_TEST_SECRET=sk-hidden-0123456789")
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}
