package sandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Where the holder can start its worker's commands (holderSpawns), it
// does: a command's parent is its holder, not a thread of the init; the
// worker's thread starts them only where it cannot, or where a test says.
func TestHolderStartsItsCommands(t *testing.T) {
	for _, thread := range []bool{false, true} {
		name := map[bool]string{false: "holder", true: "thread"}[thread]
		t.Run(name, func(t *testing.T) {
			saved := threadSpawns
			threadSpawns = thread
			defer func() { threadSpawns = saved }()
			eachPerRun(t, func(t *testing.T, sb *Sandbox) {
				c := startSleep(t, sb, ClassAuto, t.TempDir())
				ppid, _ := parentOf(t, c.Pid())
				comm, _ := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/comm")
				byHolder := strings.TrimSpace(string(comm)) == holderProcName
				if want := holderSpawns && !thread; byHolder != want {
					t.Errorf("the command's parent is %q (started by its holder: %v, want %v)", strings.TrimSpace(string(comm)), byHolder, want)
				}
			})
		})
	}
}

// The worker's thread still starts commands as it must (other
// architectures, and a sandbox whose limits a holder cannot give): the
// reuse, the leftovers and the holder's protections hold on that path
// too.
func TestThreadStartedCommandsAreContained(t *testing.T) {
	saved := threadSpawns
	threadSpawns = true
	defer func() { threadSpawns = saved }()
	t.Run("reuse", TestCommandsOneAfterAnotherReuseAWorker)
	t.Run("holder", TestCommandCannotChangeItsHolder)
	t.Run("stopped", TestStoppedHolderDoesNotHoldTheEnd)
}

// A command starts with the open-file limit hitl's own children get (Go
// raises its own soft limit, and gives the one it started with back to
// what it executes), however it is started: by its holder, under bwrap
// (whose first process keeps the limit), or by the worker's thread
// (Landlock alone, where the limit cannot be known otherwise).
func TestCommandKeepsTheOpenFileLimit(t *testing.T) {
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	if saved.Max < 1000 {
		t.Skipf("a hard open-file limit of %d", saved.Max)
	}
	low := syscall.Rlimit{Cur: 777, Max: saved.Max}
	// Setrlimit: Go's children get the new limit as it is.
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved) }()
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		for _, class := range []Class{ClassAuto, ClassApproved} {
			out, err := runIn(t, sb, class, t.TempDir(), "ulimit -n; ulimit -Hn")
			want := "777\n" + strconv.FormatUint(saved.Max, 10) + "\n"
			if err != nil || out != want {
				t.Errorf("class %v: the command's limits are %q (%v), want %q", class, out, err, want)
			}
		}
	})
}

// A command its holder starts is confined as one the worker's thread
// starts: the same capabilities (none of the holder's CAP_KILL), signal
// mask and ignored signals (none of the init's handlers, nothing
// blocked), no_new_privs, seccomp, Landlock domain (pid 1, its holder,
// is out of its reach) and descriptors.
func TestHolderStartedCommandsAreConfinedAsThreadStarted(t *testing.T) {
	if !holderSpawns {
		t.Skip("holders do not start commands on this architecture")
	}
	const script = `grep -E '^(Cap|SigBlk|SigIgn|NoNewPrivs|Seccomp)' /proc/self/status; ls /proc/self/fd | sort -n | tr '\n' ' '; echo; kill -CONT 1 2>/dev/null && echo signalled-1; pwd`
	see := func(thread bool, class Class) string {
		saved := threadSpawns
		threadSpawns = thread
		defer func() { threadSpawns = saved }()
		var out string
		eachPerRun(t, func(t *testing.T, sb *Sandbox) {
			dir := t.TempDir()
			o, err := runIn(t, sb, class, dir, script)
			if err != nil {
				t.Errorf("%v: %s", err, o)
			}
			out += string(sb.Mechanism()) + ":\n" + strings.ReplaceAll(o, dir, "DIR") + "\n"
		})
		return out
	}
	for _, class := range []Class{ClassAuto, ClassApproved} {
		byHolder, byThread := see(false, class), see(true, class)
		if byHolder != byThread {
			t.Errorf("class %v: started by the holder:\n%s\nby the thread:\n%s", class, byHolder, byThread)
		}
		if strings.Contains(byHolder, "signalled-1") {
			t.Errorf("class %v: a command signalled its holder:\n%s", class, byHolder)
		}
	}
}
