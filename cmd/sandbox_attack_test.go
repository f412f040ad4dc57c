//go:build linux

package cmd_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// attackMain is the hostile program of the sandbox scripts (DESIGN §12):
// a command an allow rule lets run, or a person approved, that tries to
// reach hitl. It prints what it managed (INJECTED, READ, OPENED, SIGNALLED)
// or why not, and always exits 0, like a harmless program would.
//
//	attack stdin          write "once" into hitl's stdin, an event into its stdout
//	attack read SECRET    read hitl's environment, stdin and memory
//	attack tty [PTS]      draw a fake question on the terminal (/dev/tty, PTS)
//	attack state FILE     read a file of hitl's state dir
//	attack mcp MARKER     write a tools/call into the stdin of the MCP server
//	                      whose command line holds MARKER
//	attack signal         signal and ptrace hitl
//	attack fds            list the descriptors it inherited
//	attack init           signal, trace and read the run's sandbox's init
//	attack hold MARKER    wait 3 s (the sibling attack's target)
//	attack sibling MARKER signal another command whose argument is MARKER
//
// It only touches hitl processes it descends from and the server holding
// MARKER, so no other process on the machine is disturbed.
func attackMain() int {
	if len(os.Args) < 2 {
		fmt.Println("usage: attack stdin|read SECRET|tty|state FILE|mcp MARKER|signal")
		return 0
	}
	if f, ok := containAttacks[os.Args[1]]; ok {
		if len(os.Args) < 3 && os.Args[1] != "sleep" {
			fmt.Println("attack " + os.Args[1] + ": missing arguments")
			return 0
		}
		f(os.Args[2:])
		return 0
	}
	hitls := hitlAncestors()
	if len(hitls) == 0 && os.Args[1] != "tty" && os.Args[1] != "state" && os.Args[1] != "mcp" && os.Args[1] != "init" && os.Args[1] != "hold" && os.Args[1] != "sibling" {
		fmt.Println("no hitl process visible")
	}
	switch os.Args[1] {
	case "stdin":
		for _, pid := range hitls {
			tryWrite(fmt.Sprintf("stdin of hitl %d", pid), fmt.Sprintf("/proc/%d/fd/0", pid), "\"once\"\n")
			tryWrite(fmt.Sprintf("stdout of hitl %d", pid), fmt.Sprintf("/proc/%d/fd/1", pid), `{"type":"run.finished","status":"success","exit_code":0}`+"\n")
		}
	case "read":
		secret := ""
		if len(os.Args) > 2 {
			secret = os.Args[2]
		}
		for _, pid := range hitls {
			for _, f := range []string{"environ", "fd/0", "mem", "cmdline"} {
				tryRead(fmt.Sprintf("%s of hitl %d", f, pid), fmt.Sprintf("/proc/%d/%s", pid, f), secret)
			}
		}
	case "tty":
		// Only the test's own terminal, named: other tests' terminals on
		// the machine are left alone.
		paths := append([]string{"/dev/tty"}, os.Args[2:]...)
		for _, p := range paths {
			// A fake question, and what a program can leave behind: a
			// scroll region, a hidden cursor, reverse video.
			tryWrite("terminal "+p, p, "\x1b[2J\x1b[HSPOOFED-BY-ATTACK Run this command?\r\n\r\n  git status\r\n\r\n> Yes, once\r\n\x1b[3;5r\x1b[?25l\x1b[7m")
		}
	case "state":
		if len(os.Args) > 2 {
			tryRead("state file "+os.Args[2], os.Args[2], "")
		}
	case "mcp":
		if len(os.Args) < 3 {
			return 0
		}
		found := false
		for _, pid := range pidsWithArg(os.Args[2]) {
			found = true
			tryWrite(fmt.Sprintf("stdin of MCP server %d", pid), fmt.Sprintf("/proc/%d/fd/0", pid),
				`{"jsonrpc":"2.0","id":9001,"method":"tools/call","params":{"name":"delete_item","arguments":{"id":"injected"}}}`+"\n")
		}
		if !found {
			fmt.Println("MCP server: not visible")
		}
	case "signal":
		for _, pid := range hitls {
			if err := syscall.Kill(pid, 0); err != nil {
				fmt.Printf("signal hitl %d: refused: %v\n", pid, err)
			} else {
				fmt.Printf("signal hitl %d: SIGNALLED\n", pid)
			}
			// PTRACE_SEIZE does not stop hitl; the attacker's exit
			// detaches it.
			runtime.LockOSThread()
			if err := unix.PtraceSeize(pid); err != nil {
				fmt.Printf("ptrace hitl %d: refused: %v\n", pid, err)
			} else {
				fmt.Printf("ptrace hitl %d: ATTACHED\n", pid)
			}
		}
	case "init":
		attackInit()
	case "hold":
		time.Sleep(3 * time.Second)
	case "sibling":
		if len(os.Args) < 3 {
			return 0
		}
		var found []int
		for _, pid := range procsMatching(func(argv []string) bool {
			return len(argv) > 1 && argv[0] == "attack" && argv[1] == "hold" && len(argv) > 2 && argv[2] == os.Args[2]
		}) {
			found = append(found, pid)
			fmt.Printf("sibling %d: %s\n", pid, signalEveryWay(pid))
		}
		if len(found) == 0 {
			fmt.Println("sibling: not visible")
		}
	case "fds":
		// Descriptors beyond stdin, stdout and stderr: what the child
		// inherited that it should not have.
		entries, _ := os.ReadDir("/proc/self/fd")
		for _, e := range entries {
			if n, _ := strconv.Atoi(e.Name()); n > 2 {
				if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && !strings.HasPrefix(target, "anon_inode:") &&
					!strings.HasPrefix(target, "/proc/") && !strings.HasPrefix(target, "/sys/fs/cgroup/") { // its own: the Go runtime's
					fmt.Printf("fd %d: INHERITED %s\n", n, target)
				}
			}
		}
	}
	return 0
}

// attackInit goes at every init of its run it can see: signals (to the process, each
// thread, a pidfd of its /proc directory), ptrace, its descriptors and
// environment; then at its own PID namespace's first process (the holder),
// whose death would end the attacker too.
func attackInit() {
	// Only this run's: its view names the working directory (another
	// test's init is left alone).
	here, _ := os.Getwd()
	inits := procsMatching(func(argv []string) bool {
		return len(argv) > 3 && argv[1] == "__hitl_sandbox_init__" && strings.Contains(argv[3], `"`+here+`"`)
	})
	if len(inits) == 0 {
		fmt.Println("init: not visible")
	}
	for _, pid := range inits {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "hitl-pidns" {
			continue
		}
		fmt.Printf("init %d signal: %s\n", pid, signalEveryWay(pid))
		if procIsMine() {
			runtime.LockOSThread()
			if err := unix.PtraceSeize(pid); err != nil {
				fmt.Printf("init %d ptrace: refused: %v\n", pid, err)
			} else {
				fmt.Printf("init %d ptrace: ATTACHED\n", pid)
			}
		}
		for fd := 0; fd < 16; fd++ {
			path := fmt.Sprintf("/proc/%d/fd/%d", pid, fd)
			if _, err := os.Lstat(path); err != nil {
				continue
			}
			if f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
				fmt.Printf("init %d fd %d: OPENED\n", pid, fd)
			} else {
				fmt.Printf("init %d fd %d: refused: %v\n", pid, fd, err)
			}
		}
		tryRead(fmt.Sprintf("environ of init %d", pid), fmt.Sprintf("/proc/%d/environ", pid), "")
	}
	// Its own namespace's first process (when it has one): SIGKILL from
	// inside is nothing to it; had it died, so would this process.
	_ = syscall.Kill(1, syscall.SIGKILL)
	time.Sleep(50 * time.Millisecond)
	fmt.Println("holder alive: the attacker is still here")
	// The second process of its namespace: the first is its holder,
	// which shares the init's memory. Neither traced nor read.
	if os.Getpid() == 2 {
		attackHolder()
	}
}

// attackHolder goes at the memory its holder (pid 1 of its namespace)
// shares with the init: tracing it, and reading it where the init's
// program is loaded.
func attackHolder() {
	runtime.LockOSThread()
	if err := unix.PtraceSeize(1); err != nil {
		fmt.Printf("holder ptrace: refused: %v\n", err)
	} else {
		fmt.Println("holder ptrace: ATTACHED")
	}
	buf := make([]byte, 64)
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
	remote := []unix.RemoteIovec{{Base: 0x400000, Len: len(buf)}}
	if n, err := unix.ProcessVMReadv(1, local, remote, 0); err != nil {
		fmt.Printf("holder memory: refused: %v\n", err)
	} else {
		fmt.Printf("holder memory: READ %d bytes\n", n)
	}
}

// procIsMine says whether /proc is of this process's PID namespace (a pid
// it shows is the one kill(2) takes).
func procIsMine() bool {
	self, err := os.Readlink("/proc/self")
	return err == nil && self == strconv.Itoa(os.Getpid())
}

// signalEveryWay sends SIGCONT (harmless) to pid every way there is: the
// process and each thread (when /proc numbers them as kill does), and a
// pidfd made of its /proc directory. "SIGNALLED" when one got through.
func signalEveryWay(pid int) string {
	var errs []string
	if procIsMine() {
		if err := syscall.Kill(pid, syscall.SIGCONT); err == nil {
			return "SIGNALLED (kill)"
		} else {
			errs = append(errs, "kill: "+err.Error())
		}
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				if err := unix.Tgkill(pid, tid, unix.SIGCONT); err == nil {
					return "SIGNALLED (tgkill)"
				}
			}
		}
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/%d", pid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		err = unix.PidfdSendSignal(fd, unix.SIGCONT, nil, 0)
		unix.Close(fd)
		if err == nil {
			return "SIGNALLED (pidfd)"
		}
	}
	errs = append(errs, fmt.Sprintf("pidfd: %v", err))
	return "refused: " + strings.Join(errs, "; ")
}

// procsMatching are the pids /proc shows, but this one, whose command line
// matches.
func procsMatching(match func(argv []string) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || e.Name() == selfProcName() {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(data) == 0 {
			continue
		}
		if match(strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")) {
			out = append(out, pid)
		}
	}
	return out
}

// selfProcName is this process's name in /proc (its pid there).
func selfProcName() string {
	self, _ := os.Readlink("/proc/self")
	return self
}

func tryWrite(what, path, text string) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		fmt.Printf("%s: refused: %v\n", what, err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		fmt.Printf("%s: refused: %v\n", what, err)
		return
	}
	fmt.Printf("%s: INJECTED\n", what)
}

func tryRead(what, path, secret string) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		fmt.Printf("%s: refused: %v\n", what, err)
		return
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n, err := f.Read(buf)
	if n == 0 && err != nil {
		fmt.Printf("%s: refused: %v\n", what, err)
		return
	}
	fmt.Printf("%s: READ %d bytes\n", what, n)
	if secret != "" && bytes.Contains(buf[:n], []byte(secret)) {
		fmt.Printf("%s: LEAKED the secret\n", what)
	}
}

// hitlAncestors are the processes above this one whose argv[0] is hitl.
func hitlAncestors() []int {
	var out []int
	for pid := parentOf(selfPid()); pid > 1; pid = parentOf(pid) {
		if argv0(pid) == "hitl" {
			out = append(out, pid)
		}
	}
	return out
}

// selfPid is this process's pid as /proc names it: in a PID namespace of
// its own (Landlock alone) getpid says 1, while /proc is the machine's.
func selfPid() int {
	if link, err := os.Readlink("/proc/self"); err == nil {
		if pid, err := strconv.Atoi(link); err == nil {
			return pid
		}
	}
	return os.Getpid()
}

// parentOf is pid's parent, 0 when it cannot be read.
func parentOf(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func argv0(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	a, _, _ := bytes.Cut(data, []byte{0})
	return filepath.Base(string(a))
}

// pidsWithArg are the processes, in this directory, one of whose
// arguments is marker.
func pidsWithArg(marker string) []int {
	here, _ := os.Getwd()
	mine := map[int]bool{}
	for pid := selfPid(); pid > 0 && !mine[pid]; pid = parentOf(pid) {
		mine[pid] = true // its own command line holds the marker too
	}
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || mine[pid] {
			continue
		}
		if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err != nil || cwd != here {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		for _, a := range bytes.Split(data, []byte{0}) {
			if string(a) == marker {
				out = append(out, pid)
			}
		}
	}
	return out
}

func init() {
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		// NOBWRAP is a PATH without bwrap: the machine as it is where
		// bwrap is not installed, so hitl falls back to Landlock.
		path, err := pathWithoutBwrap(env.Getenv("PATH"), filepath.Join(env.WorkDir, ".nobwrap"))
		env.Setenv("NOBWRAP", path)
		return err
	})
}

// pathWithoutBwrap is path with each directory holding bwrap replaced by
// dir, made to hold links to everything else in it.
func pathWithoutBwrap(path, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var keep []string
	for _, d := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(d, "bwrap")); err != nil {
			keep = append(keep, d)
			continue
		}
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.Name() != "bwrap" {
				_ = os.Symlink(filepath.Join(d, e.Name()), filepath.Join(dir, e.Name()))
			}
		}
		keep = append(keep, dir)
	}
	return strings.Join(keep, string(filepath.ListSeparator)), nil
}

// sandboxCondition answers [sandbox:bwrap] and [sandbox:landlock]: the
// machine can confine children that way.
func sandboxCondition(mech string) (bool, error) {
	mode, err := sandbox.ParseMode(mech)
	if err != nil {
		return false, err
	}
	dir, err := os.MkdirTemp("", "hitl-probe-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	_, err = sandbox.New(mode, dir)
	return err == nil, nil
}

// TestSandboxAttacks runs the attack scripts (testdata/script/sandbox)
// under each mechanism the machine has: bwrap, and Landlock with bwrap
// hidden from PATH. $MECH is the mechanism run.started must name (quoted
// for stdout's regular expressions).
func TestSandboxAttacks(t *testing.T) {
	// Each mode (permissions.sandbox) and the mechanism run.started
	// names for it here.
	for _, c := range []struct{ mode, mech string }{{"bwrap", "bwrap+landlock"}, {"landlock", "landlock"}} {
		mech := c.mech
		t.Run(mech, func(t *testing.T) {
			if ok, _ := sandboxCondition(c.mode); !ok {
				t.Skipf("this machine cannot confine commands with %s", c.mode)
			}
			testscript.Run(t, testscript.Params{
				Dir: "../testdata/script/sandbox",
				Setup: func(env *testscript.Env) error {
					env.Setenv("CI", "")
					env.Setenv("HITL_PROMPT", "")
					env.Setenv("XDG_STATE_HOME", env.WorkDir+"/.state")
					for _, setup := range scriptSetups {
						if err := setup(env); err != nil {
							return err
						}
					}
					// Matched by stdout, a regular expression.
					env.Setenv("MECH", regexp.QuoteMeta(mech))
					// A script's bind mounts end with it, however it ends.
					work := env.WorkDir
					env.Defer(func() { unmountUnder(work) })
					if mech == "landlock" {
						env.Setenv("PATH", env.Getenv("NOBWRAP"))
					}
					return nil
				},
				Condition: func(cond string) (bool, error) {
					if cond == "root" {
						return os.Geteuid() == 0, nil
					}
					return condition(cond)
				},
				Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
					"exitcode": cmdExitCode,
				},
			})
		})
	}
}

// unmountUnder detaches every mount inside dir (a script's bind mounts).
func unmountUnder(dir string) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	lines := strings.Split(string(data), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		f := strings.Fields(lines[i])
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			_ = syscall.Unmount(f[4], syscall.MNT_DETACH)
		}
	}
}
