//go:build linux

// Command sandboxprobe is the policy table test's probe (DESIGN §15): run
// as a sandboxed child, it tries every channel a child could use to reach
// past its class's policy and prints one JSON object on stdout, each
// channel "ok" or "denied: REASON". It changes nothing it reaches: it
// opens kernel settings for writing without writing, writes files only in
// the test's own temp trees, renames a directory back at once, and unmounts
// what it mounted.
//
// Besides the probe itself, the same binary plays the helpers the test
// needs, named by a first word: "standin" (a process that plays hitl: it
// waits to be killed), "linger FILE PID" (a setsid child that writes FILE
// when it outlives the probe, PID), "unshare" and "ptrace PID" (system calls tried
// in a process of their own, so the probe stays as it started). -list
// prints the channels' names.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// opts are the places the test set up for the channels.
type opts struct {
	workdir  string // the run's working dir (Writable)
	outside  string // a directory outside it
	fifo     string // a FIFO outside the working dir, with a reader
	sock     string // a listening unix socket outside the working dir
	state    string // hitl's state dir (holds session.key)
	home     string // the fake $HOME holding credential stores
	deny     string // a file named by deny_read
	pid      int    // the process playing hitl
	pts      string // the person's terminal (a pty slave the test holds)
	tcp      string // a loopback listener outside
	sysfile  string // a /sys file
	cgroup   string // a cgroup file
	linger   string // where the setsid child says it survived
	procsys  string // a /proc/sys file
	deadline time.Duration
}

// check refuses a probe run that misses a place: a channel would try the
// probe's own directory instead.
func (o opts) check() error {
	for _, f := range []struct{ name, value string }{
		{"workdir", o.workdir}, {"outside", o.outside}, {"fifo", o.fifo}, {"sock", o.sock},
		{"state", o.state}, {"home", o.home}, {"deny", o.deny}, {"pts", o.pts},
		{"sysfile", o.sysfile}, {"cgroup", o.cgroup}, {"linger-file", o.linger},
	} {
		if !filepath.IsAbs(f.value) {
			return fmt.Errorf("-%s wants an absolute path, got %q", f.name, f.value)
		}
	}
	if o.pid <= 0 || o.tcp == "" {
		return errors.New("-pid and -tcp are required")
	}
	return nil
}

// channel is one way to reach past the policy; it returns nil when it
// reached.
type channel struct {
	name string
	try  func(o opts) error
}

var channels = []channel{
	{"write-workdir", func(o opts) error { return writeFile(filepath.Join(o.workdir, "probe-written")) }},
	{"write-outside", func(o opts) error { return writeFile(filepath.Join(o.outside, "probe-written")) }},
	{"write-via-cwd", func(o opts) error { return writeFile("probe-cwd-written") }},
	{"write-proc-sys", func(o opts) error { return openOnly(o.procsys, unix.O_WRONLY) }},
	{"write-sys", func(o opts) error { return openOnly(o.sysfile, unix.O_WRONLY) }},
	{"write-cgroup", func(o opts) error { return openOnly(o.cgroup, unix.O_WRONLY) }},
	{"fifo-write", fifoWrite},
	{"unix-connect", unixConnect},
	{"rename-state-parent", renameStateParent},
	{"read-state", func(o opts) error { return readFile(filepath.Join(o.state, "session.key")) }},
	{"read-ssh", func(o opts) error { return readFile(filepath.Join(o.home, ".ssh", "id_ed25519")) }},
	{"read-netrc", func(o opts) error { return readFile(filepath.Join(o.home, ".netrc")) }},
	{"read-deny", func(o opts) error { return readFile(o.deny) }},
	{"read-hitl-fd", hitlFD},
	{"read-hitl-mem", func(o opts) error {
		return withPid(o, func() error { return openOnly(fmt.Sprintf("/proc/%d/mem", o.pid), unix.O_RDONLY) })
	}},
	{"signal-hitl", func(o opts) error { return withPid(o, func() error { return unix.Kill(o.pid, unix.SIGCONT) }) }},
	{"ptrace-hitl", func(o opts) error {
		return withPid(o, func() error { return helper(o, "ptrace", strconv.Itoa(o.pid)) })
	}},
	{"open-dev-tty", func(o opts) error { return openOnly("/dev/tty", unix.O_RDWR|unix.O_NOCTTY) }},
	{"open-dev-pts", func(o opts) error { return openOnly(o.pts, unix.O_RDWR|unix.O_NOCTTY) }},
	{"tiocsti", tiocsti},
	{"connect-loopback", connectLoopback},
	{"mknod", mknod},
	{"mount", mountTmpfs},
	{"unshare", unshare},
	{"setsid-survive", startLinger},
	{"signal-init", func(o opts) error { return signalAny(findProcs(o.isInit)) }},
	{"read-init-fd", func(o opts) error { return readProcFDs(findProcs(o.isInit)) }},
	{"signal-sibling", func(o opts) error { return signalAny(findProcs(isSibling)) }},
}

// initArg is what names the run's sandbox's init on its command line
// (exec/sandbox's initArg).
const initArg = "__hitl_sandbox_init__"

// holderName is the name of the first process of a command's PID
// namespace (exec/sandbox's forkHolder).
const holderName = "hitl-pidns"

// siblingName is argv[0] of the command the test runs beside the probe, in
// the same class.
const siblingName = "hitl-probe-sibling"

// isInit says whether argv is the command line of this run's init: its
// view names the run's state dir (another run's init, another test's, is
// no matter here). A process named hitl-pidns is not one (findProcs).
func (o opts) isInit(argv []string) bool {
	return len(argv) > 3 && argv[1] == initArg && strings.Contains(argv[3], `"state_dir":"`+o.state+`"`)
}
func isSibling(argv []string) bool { return len(argv) > 0 && argv[0] == siblingName }

// findProcs are the pids /proc shows whose command line matches.
func findProcs(match func(argv []string) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm")); strings.TrimSpace(string(comm)) == holderName {
			continue
		}
		if match(strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// signalAny sends SIGCONT (harmless) to each pid every way there is: to
// the process, to each of its threads, and through a pidfd made of its
// /proc directory. nil when one got through.
func signalAny(pids []int) error {
	if len(pids) == 0 {
		return errors.New("absent: no such process in sight")
	}
	// A pid /proc shows names that process in kill(2) only when /proc is
	// of the probe's own PID namespace; else the number may name another
	// process (the probe's own child), and only the /proc directory itself
	// names it.
	mine := procIsMine()
	var last error
	for _, pid := range pids {
		if !mine {
			last = errors.New("not in the probe's PID namespace")
		} else if last = unix.Kill(pid, unix.SIGCONT); last == nil {
			return nil
		}
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, task := range tasks {
			if !mine {
				break
			}
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			if err := unix.Tgkill(pid, tid, unix.SIGCONT); err == nil {
				return nil
			}
		}
		fd, err := unix.Open(fmt.Sprintf("/proc/%d", pid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.PidfdSendSignal(fd, unix.SIGCONT, nil, 0)
			unix.Close(fd)
			if err == nil {
				return nil
			}
		}
		last = err
	}
	return last
}

// procIsMine says whether /proc is of the probe's PID namespace.
func procIsMine() bool {
	self, err := os.Readlink("/proc/self")
	return err == nil && self == strconv.Itoa(os.Getpid())
}

// readProcFDs opens each pid's descriptors and reads its environment
// through /proc: nil when one opened.
func readProcFDs(pids []int) error {
	if len(pids) == 0 {
		return errors.New("absent: no such process in sight")
	}
	var last error
	for _, pid := range pids {
		for fd := 0; fd < 16; fd++ {
			path := fmt.Sprintf("/proc/%d/fd/%d", pid, fd)
			if _, err := os.Readlink(path); err != nil {
				if !errors.Is(err, os.ErrNotExist) {
					last = err
				}
				continue
			}
			f, err := os.Open(path)
			if err == nil {
				f.Close()
				return nil
			}
			last = err
		}
		if err := readFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil {
			return nil
		} else {
			last = err
		}
	}
	return last
}

func main() {
	var o opts
	flag.StringVar(&o.workdir, "workdir", "", "the run's working directory")
	flag.StringVar(&o.outside, "outside", "", "a directory outside the working directory")
	flag.StringVar(&o.fifo, "fifo", "", "a FIFO outside the working directory")
	flag.StringVar(&o.sock, "sock", "", "a unix socket outside the working directory")
	flag.StringVar(&o.state, "state", "", "hitl's state directory")
	flag.StringVar(&o.home, "home", "", "the home holding credential stores")
	flag.StringVar(&o.deny, "deny", "", "a path deny_read names")
	flag.IntVar(&o.pid, "pid", 0, "the process playing hitl")
	flag.StringVar(&o.pts, "pts", "", "the person's terminal")
	flag.StringVar(&o.tcp, "tcp", "", "a loopback listener HOST:PORT")
	flag.StringVar(&o.sysfile, "sysfile", "", "a /sys file")
	flag.StringVar(&o.cgroup, "cgroup", "", "a cgroup file")
	flag.StringVar(&o.procsys, "procsys", "/proc/sys/kernel/msgmax", "a /proc/sys file")
	flag.StringVar(&o.linger, "linger-file", "", "where a setsid child says it outlived the probe")
	flag.DurationVar(&o.deadline, "timeout", 3*time.Second, "bound of each channel")
	list := flag.Bool("list", false, "print the channels' names as JSON and exit")
	verbose := flag.Bool("v", false, "say each channel's outcome and time on stderr as it goes")
	flag.Parse()

	// The helpers: a word, never a flag that a missing value could turn
	// into a run of the whole probe.
	switch flag.Arg(0) {
	case "standin":
		runStandin()
	case "linger":
		owner, _ := strconv.Atoi(flag.Arg(2))
		runLinger(flag.Arg(1), owner)
	case "unshared":
		os.Exit(0) // started in new namespaces: that was the test
	case "ptrace":
		pid, err := strconv.Atoi(flag.Arg(1))
		if err != nil || pid <= 0 {
			exitWith(fmt.Errorf("ptrace: bad pid %q", flag.Arg(1)))
		}
		exitWith(seize(pid))
	case "":
	default:
		fmt.Fprintf(os.Stderr, "sandboxprobe: unknown helper %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if *list {
		names := make([]string, len(channels))
		for i, c := range channels {
			names[i] = c.name
		}
		data, _ := json.Marshal(names)
		fmt.Println(string(data))
		return
	}

	if err := o.check(); err != nil {
		fmt.Fprintf(os.Stderr, "sandboxprobe: %v\n", err)
		os.Exit(2)
	}
	out := map[string]string{}
	for _, c := range channels {
		start := time.Now()
		out[c.name] = outcome(bounded(o.deadline, func() error { return c.try(o) }))
		if *verbose {
			fmt.Fprintf(os.Stderr, "%s: %s (%v)\n", c.name, out[c.name], time.Since(start).Round(time.Millisecond))
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(data))
}

// runStandin plays hitl: a process that lets anyone of its user trace it
// (Yama would otherwise decide) and lives until it is killed, or 10
// minutes at most.
func runStandin() {
	_ = unix.Prctl(unix.PR_SET_PTRACER, unix.PR_SET_PTRACER_ANY, 0, 0, 0)
	fmt.Println("ready")
	time.Sleep(10 * time.Minute)
	os.Exit(0)
}

// runLinger is the setsid child: once its owner (the probe, pid owner) is
// gone, it waits long enough for whatever should end it to have done so,
// then writes file and exits. It never lives longer than 10 s.
func runLinger(file string, owner int) {
	if file == "" || owner <= 0 {
		exitWith(errors.New("linger: want FILE OWNER-PID"))
	}
	end := time.Now().Add(10 * time.Second)
	for time.Now().Before(end) {
		if os.Getppid() != owner {
			time.Sleep(500 * time.Millisecond)
			_ = os.WriteFile(file, []byte("survived\n"), 0o644)
			os.Exit(0)
		}
		time.Sleep(20 * time.Millisecond)
	}
	os.Exit(0)
}

func exitWith(err error) {
	if err != nil {
		fmt.Fprint(os.Stderr, short(err))
		os.Exit(1)
	}
	os.Exit(0)
}

// seize attaches to pid without stopping it; the tracer's exit detaches.
func seize(pid int) error {
	runtime.LockOSThread()
	_, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(pid), 0, 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// helper runs this binary with args in a process of its own and takes its
// exit as the outcome (its stderr the reason).
func helper(o opts, args ...string) error {
	return helperWith(o, nil, args...)
}

// unshare starts a process in a new user and mount namespace (a Go
// program has threads, and unshare(CLONE_NEWUSER) wants one).
func unshare(o opts) error {
	return helperWith(o, &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS}, "unshared")
}

func helperWith(o opts, attr *syscall.SysProcAttr, args ...string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd := exec.Command(self, args...)
	cmd.SysProcAttr = attr
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(o.deadline):
		_ = cmd.Process.Kill()
		<-done
		return errors.New("timeout")
	}
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return errors.New(msg)
		}
		return err
	}
	return nil
}

// startLinger starts the setsid child; the test, not the probe, says
// whether it outlived the probe. The probe reports only whether it could
// start it.
func startLinger(o opts) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if o.linger == "" {
		return errors.New("no linger file given")
	}
	cmd := exec.Command(self, "linger", o.linger, strconv.Itoa(os.Getpid()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

func writeFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString("probe\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 64)
	_, err = f.Read(buf)
	return err
}

// openOnly opens path and closes it: opening a kernel setting for writing
// is evidence enough, and changes nothing.
func openOnly(path string, flags int) error {
	if path == "" {
		return errors.New("no path given")
	}
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	return unix.Close(fd)
}

func fifoWrite(o opts) error {
	fd, err := unix.Open(o.fifo, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte("\"once\"\n"))
	return err
}

func unixConnect(o opts) error {
	c, err := net.DialTimeout("unix", o.sock, o.deadline)
	if err != nil {
		return err
	}
	return c.Close()
}

func connectLoopback(o opts) error {
	c, err := net.DialTimeout("tcp", o.tcp, o.deadline)
	if err != nil {
		return err
	}
	return c.Close()
}

// renameStateParent renames the state dir's parent away and, when that
// worked, back at once (the test checks and restores it too).
func renameStateParent(o opts) error {
	parent := filepath.Dir(o.state)
	moved := parent + ".moved"
	if err := unix.Rename(parent, moved); err != nil {
		return err
	}
	_ = unix.Rename(moved, parent)
	return nil
}

// hitlFD opens hitl's stdin through /proc for writing: the attack that
// answered hitl's next question.
func hitlFD(o opts) error {
	return withPid(o, func() error { return openOnly(fmt.Sprintf("/proc/%d/fd/0", o.pid), unix.O_WRONLY) })
}

// withPid runs fn when the test named hitl's pid (0 or less would be the
// probe's own group, or every process).
func withPid(o opts, fn func() error) error {
	if o.pid <= 0 {
		return errors.New("no pid given")
	}
	return fn()
}

// tiocsti pushes a character into the person's terminal's input.
func tiocsti(o opts) error {
	if o.pts == "" {
		return errors.New("no terminal given")
	}
	fd, err := unix.Open(o.pts, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	c := byte('#')
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
	if errno != 0 {
		return errno
	}
	return nil
}

func mknod(o opts) error {
	path := filepath.Join(o.workdir, "probe-null")
	if err := unix.Mknod(path, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))); err != nil {
		return err
	}
	return os.Remove(path)
}

func mountTmpfs(o opts) error {
	dir := filepath.Join(o.workdir, "probe-mnt")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("probe", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=16k"); err != nil {
		return err
	}
	return unix.Unmount(dir, unix.MNT_DETACH)
}

// bounded runs fn, giving up after d: a channel that blocks is not a
// channel that reached.
func bounded(d time.Duration, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return errors.New("timeout")
	}
}

// outcome is "ok" or "denied: " and the error's errno name, or its text.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return "denied: " + short(err)
}

func short(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
	}
	return err.Error()
}
