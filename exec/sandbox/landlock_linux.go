package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// helperArg is argv[1] of the re-exec of hitl that applies a Landlock
// domain to itself and then executes the child (see init).
const helperArg = "__hitl_sandbox_exec__"

func init() {
	if len(os.Args) > 4 && os.Args[1] == helperArg {
		// The capabilities dropped are this thread's: it is the one
		// that executes the program.
		runtime.LockOSThread()
		os.Exit(helperMain(os.Args[2], os.Args[3], os.Args[4:]))
	}
}

// helperMain confines this process (every thread) and executes prog with
// argv; it returns only on failure, as a shell would: 126, or 127 when prog
// is gone.
func helperMain(cfgJSON, prog string, argv []string) int {
	// hitl's executable (fd 3 under bwrap) and whatever else was
	// inherited never reach the program.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	var v view
	if err := json.Unmarshal([]byte(cfgJSON), &v); err != nil {
		fmt.Fprintf(os.Stderr, "hitl sandbox: bad configuration: %v\n", err)
		return 126
	}
	if err := confine(v); err != nil {
		fmt.Fprintf(os.Stderr, "hitl sandbox: cannot apply the Landlock domain: %v\n", err)
		return 126
	}
	if err := filterSockets(v.policy().unixSockets, v.Network, v.policy().namespaces); err != nil {
		fmt.Fprintf(os.Stderr, "hitl sandbox: cannot apply the socket filter: %v\n", err)
		return 126
	}
	keep := seenCaps
	if !v.policy().writeAll {
		keep = nil
	}
	// Under Landlock alone the program's own start still needs root's
	// (a PID namespace): the bounding set is what it executes with.
	// Inside bwrap only keep stays, in every set, the bounding one too
	// (bwrap leaves root's whole, and gave CAP_SETPCAP to empty it).
	drop := dropBounding
	if v.InBwrap {
		drop = func(keep []int) error {
			_, err := threadCaps(keep)
			return err
		}
	}
	if err := drop(keep); err != nil {
		fmt.Fprintf(os.Stderr, "hitl sandbox: %v\n", err)
		return 126
	}
	env := append(os.Environ(), v.LoaderEnv...)
	if v.PidNS {
		return runInPidNS(prog, argv, env)
	}
	err := syscall.Exec(prog, argv, env)
	fmt.Fprintf(os.Stderr, "%s: %v\n", argv[0], err)
	if err == syscall.ENOENT {
		return 127
	}
	return 126
}

// runInPidNS runs prog, confined as this helper is, as the first process
// of a new PID namespace, killed if the helper dies: when it ends, the
// kernel ends everything it started, setsid or not, and when hitl ends the
// helper dies with it (its parent-death signal). The helper waits and ends
// as prog did: its exit code, or the signal that killed it.
func runInPidNS(prog string, argv, env []string) int {
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pidnsAttr(attr)
	// hitl stops a command with SIGTERM to its process group, which
	// reaches prog too (and, as the first process of its namespace, only
	// if it handles it); the helper outlives it and passes it on to a prog
	// that left the group. SIGKILL (hitl's, or its death) ends both.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	pid, err := syscall.ForkExec(prog, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}, Sys: attr})
	if err == nil {
		go func() {
			for sig := range sigs {
				if pg, err := syscall.Getpgid(pid); err == nil && pg != syscall.Getpgrp() {
					_ = syscall.Kill(pid, sig.(syscall.Signal))
				}
			}
		}()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", argv[0], err)
		if err == syscall.ENOENT {
			return 127
		}
		return 126
	}
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if ws.Signaled() {
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// confine applies the view's domain (DESIGN §15) to every thread of this
// process: domainRules, with TCP refused without the network and signals
// and abstract unix sockets scoped to the domain.
func confine(v view) error {
	rules := domainRules(v)
	llRules := make([]landlock.Rule, len(rules))
	for i, r := range rules {
		llRules[i] = landlock.PathAccess(r.access, r.path).IgnoreIfMissing()
	}
	// One domain for all three (each domain is a pass over every thread).
	c := landlock.V7
	if v.Network {
		c.HandledAccessNet = 0
	}
	// TCP, without the network: no bind, no connect (the socket filter
	// refuses the rest).
	return c.BestEffort().Restrict(llRules...)
}

// pathRule grants access beneath path (a file's rights only, for a path
// that is not a directory).
type pathRule struct {
	path   string
	access landlock.AccessFSSet
}

// Rights of pathRule: fileRights are those a rule on a file may hold.
const (
	readRights = landlock.AccessFSSet(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR)
	fileRights = landlock.AccessFSSet(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE)
	ioctlDev   = landlock.AccessFSSet(unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
	noDevices  = landlock.AccessFSSet(unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK)
	refer      = landlock.AccessFSSet(unix.LANDLOCK_ACCESS_FS_REFER)
)

// writeRights are every right of ABI 7 but making device nodes.
var writeRights = landlock.V7.HandledAccessFS &^ noDevices

// domainRules are the view's Landlock rules, granting, never subtracting:
// reading everything but /dev, the state dir and the view's hidden paths;
// writing where the class may (everywhere the user may, or the view's
// writable directories) but the trees no child writes, the state dir, and
// the directories above it (no rule names them, only their other entries:
// they cannot be renamed away); the few devices every program needs.
// ptrace, and so /proc/<pid>/fd and mem, of processes outside the domain
// is refused by Landlock itself.
func domainRules(v view) []pathRule {
	var rules []pathRule
	// What a child may not read. Inside bwrap the mounts hide them (an
	// empty tmpfs over the state dir and the credential stores, a /dev of
	// its own), so reading is granted whole: Landlock grants, never
	// subtracts, and granting all but a path costs a rule for each entry of
	// every directory on the way to it (a /tmp of thousands).
	var hidden []string
	if !v.InBwrap {
		hidden = append([]string{"/dev"}, v.Hidden...)
		if v.StateDir != "" {
			hidden = append(hidden, v.StateDir)
		}
	}
	grant := func(access landlock.AccessFSSet) func(path string, dir bool) {
		return func(path string, dir bool) {
			a := access
			if !dir {
				a &= fileRights
			}
			rules = append(rules, pathRule{path, a})
		}
	}
	// Writing never includes making device nodes (a terminal, a disk).
	write := grant(writeRights)
	// No rule names a hidden path nor a directory above it, only their
	// other entries: they cannot be written, made, nor renamed away.
	// Inside bwrap the state dir and the directories above it are mounts
	// no child can write nor rename, so a working directory that holds
	// them (a test's) stays writable.
	noWrite := append(slices.Clone(neverWritable), v.Hidden...)
	if !v.InBwrap && v.StateDir != "" {
		noWrite = append(noWrite, v.StateDir)
	}
	// A link on the way to the state dir is an entry of a directory
	// that may be writable, and no mount can cover a link: no rule names
	// it nor a directory above it, inside bwrap too.
	noWrite = append(noWrite, v.StateLinks...)
	if v.policy().writeAll {
		siblings("/", noWrite, write)
	} else {
		for _, d := range v.Writable {
			siblings(d, noWrite, write)
		}
	}
	siblings("/", hidden, grant(readRights))
	// Listing the directories above a hidden one (/, ~) is allowed, and
	// with it (Landlock's rights reach every directory beneath) listing
	// the hidden one: its names, never what its files hold.
	for _, h := range hidden {
		for d := filepath.Dir(h); ; d = filepath.Dir(d) {
			rules = append(rules, pathRule{d, landlock.AccessFSSet(unix.LANDLOCK_ACCESS_FS_READ_DIR)})
			if d == "/" {
				break
			}
		}
	}
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"} {
		rules = append(rules, pathRule{dev, readRights&fileRights | landlock.AccessFSSet(unix.LANDLOCK_ACCESS_FS_WRITE_FILE|unix.LANDLOCK_ACCESS_FS_TRUNCATE) | ioctlDev})
	}
	if v.InBwrap || v.policy().writeAll {
		// Inside bwrap /dev/shm is the sandbox's own; under Landlock
		// alone it is the machine's, shared with every process of the
		// user (a named pipe there may feed hitl its answers).
		rules = append(rules, pathRule{"/dev/shm", writeRights &^ refer &^ ioctlDev})
	}
	return rules
}

// siblings calls fn for root, or, when a hidden path lies inside root, for
// every entry of the directories on the way from root to it that is not
// itself on that way: everything under root but the hidden paths, as the
// fewest hierarchies. Hidden paths outside root are no matter.
func siblings(root string, hidden []string, fn func(path string, dir bool)) {
	onWay := map[string]bool{}
	isHidden := map[string]bool{}
	for _, h := range hidden {
		if !Within(h, root) {
			continue
		}
		isHidden[h] = true
		for d := filepath.Dir(h); Within(d, root); d = filepath.Dir(d) {
			onWay[d] = true
			if d == root || d == "/" {
				break
			}
		}
	}
	if isHidden[root] {
		return
	}
	if !onWay[root] {
		if fi, err := os.Stat(root); err == nil {
			fn(root, fi.IsDir())
		}
		return
	}
	var visit func(dir string)
	visit = func(dir string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case isHidden[p]:
			case onWay[p]:
				visit(p)
			default:
				// A symbolic link is never followed: a rule on its
				// target would grant what the link points at (the
				// home's .ssh, /proc/sys), planted by whoever could
				// make a link there. What it points at is granted
				// only where its own tree is.
				fi, err := os.Lstat(p)
				if err != nil || fi.Mode()&os.ModeSymlink != 0 {
					continue
				}
				fn(p, fi.IsDir())
			}
		}
	}
	visit(root)
}

// probeLandlock checks the kernel has Landlock and hitl can re-execute
// itself.
func probeLandlock() (self, why string) {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 || int(abi) < 1 {
		return "", "the kernel has no Landlock"
	}
	// The running binary itself, not its path: a command a person
	// approved may replace the file at the path, never what runs.
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		return "", fmt.Sprintf("hitl cannot find its own executable (%v)", err)
	}
	return "/proc/self/exe", ""
}

// landlockArgs is the helper's command line for prog.
func (s *Sandbox) landlockArgs(prog string, argv []string, spec Spec) ([]string, error) {
	v := s.viewOf(spec)
	v.PidNS = s.pidns
	if err := v.check(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append([]string{"hitl-sandbox", helperArg, string(data), prog}, argv...), nil
}
