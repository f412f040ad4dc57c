//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

const (
	// policyChildEnv marks the re-executed test that runs as the
	// unprivileged user: it names the file it writes what it saw to.
	policyChildEnv = "HITL_POLICY_TABLE_CHILD"
	// policyProbeEnv names the probe the root test built, for the child.
	policyProbeEnv = "HITL_POLICY_PROBE"
	// policyUser is the unprivileged user the test creates as root.
	policyUser = "hitl-probe"
	// lingerGrace is how long after its owner ended a setsid child must
	// be gone (the probe's -linger writes its file 500 ms after it is
	// orphaned).
	lingerGrace = 1500 * time.Millisecond
	// probeTimeout bounds one run of the probe (it takes well under a
	// second; each channel gives up after 3 s).
	probeTimeout = 20 * time.Second
	// maxTimeouts is how many runs of a column may time out before the
	// rest of the column is not tried (the test stays bounded).
	maxTimeouts = 2
)

// probeCells are what the probe reached in a mechanism column: class →
// channel → "ok" or "denied: WHY".
type probeCells map[string]map[string]string

// policyObservation is what the unprivileged child saw, handed to the root
// test as JSON.
type policyObservation struct {
	Cells   map[string]probeCells `json:"cells"`   // mechanism → cells
	Skipped map[string]string     `json:"skipped"` // mechanism → why
}

// probeRun is one run of the probe as a sandboxed child.
type probeRun struct {
	probe          string
	args           []string
	cwd, workdir   string
	tempDir, deny  string
	env            []string
	stdout, stderr io.Writer
}

// TestPolicyTable runs the probe as every class of child under every
// mechanism and compares what it reached with testdata/policy.table: as
// the user running the test and, when that is root, as an unprivileged
// user the test creates (by re-executing this test binary as that user).
func TestPolicyTable(t *testing.T) {
	if out := os.Getenv(policyChildEnv); out != "" {
		policyChild(t, out)
		return
	}
	pt := readPolicyTable(t)
	probe := buildProbe(t)
	var unpriv *policyObservation
	if os.Geteuid() == 0 {
		unpriv = observeUnprivileged(t, probe)
	} else {
		t.Logf("not root: the table is checked as uid %d only", os.Geteuid())
	}
	for _, mech := range policyMechanisms {
		t.Run(mech, func(t *testing.T) {
			cells, why := observeMechanism(t, mech, probe)
			if why != "" {
				t.Skipf("no %s column on this machine: %s", mech, why)
			}
			who := "uid " + strconv.Itoa(os.Geteuid())
			if os.Geteuid() == 0 {
				who = "root"
			}
			diffs := comparePolicy(pt, mech, who, os.Geteuid() == 0, cells)
			if unpriv != nil {
				if why, skipped := unpriv.Skipped[mech]; skipped {
					// The machine lets root have it, not this user (bwrap
					// without unprivileged user namespaces): hitl run by
					// such a user gets another mechanism, checked in its
					// own column.
					t.Logf("NOT CHECKED as %s: no %s column for that user here: %s", policyUser, mech, why)
				} else {
					diffs = append(diffs, comparePolicy(pt, mech, policyUser, false, unpriv.Cells[mech])...)
				}
			}
			if len(diffs) > 0 {
				t.Errorf("%d cells of the %s column differ from %s:\n%s", len(diffs), mech, policyTableFile, formatDiffs(diffs))
			}
		})
	}
}

// policyChild is the test re-executed as the unprivileged user: it runs
// every column and writes what it saw to out.
func policyChild(t *testing.T, out string) {
	probe := os.Getenv(policyProbeEnv)
	obs := policyObservation{Cells: map[string]probeCells{}, Skipped: map[string]string{}}
	for _, mech := range policyMechanisms {
		t.Run(mech, func(t *testing.T) {
			cells, why := observeMechanism(t, mech, probe)
			if why != "" {
				obs.Skipped[mech] = why
				return
			}
			obs.Cells[mech] = cells
		})
	}
	data, err := json.Marshal(obs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// policyDiff is one cell that differs from the table.
type policyDiff struct {
	channel, class, who, want, got string
	line                           int
}

// comparePolicy checks cells (what the probe reached as who) against the
// table's mechanism column.
func comparePolicy(pt policyTable, mech, who string, asRoot bool, cells probeCells) []policyDiff {
	var diffs []policyDiff
	for _, r := range pt.rows {
		if r.mechanism != mech {
			continue
		}
		for i, class := range policyClasses {
			got, ok := cells[class][r.channel]
			if !ok {
				got = "(the probe has no such channel)"
			}
			if !policyMatches(r.want[i], got, asRoot) {
				diffs = append(diffs, policyDiff{channel: r.channel, class: class, who: who, want: r.want[i], got: got, line: r.line})
			}
		}
	}
	known := map[string]bool{}
	for _, ch := range pt.channels() {
		known[ch] = true
	}
	for _, class := range policyClasses {
		for ch, got := range cells[class] {
			if !known[ch] {
				diffs = append(diffs, policyDiff{channel: ch, class: class, who: who, want: "(no row in the table)", got: got})
			}
		}
	}
	return diffs
}

// policyMatches says whether an outcome the probe reported fits the
// table's expectation.
func policyMatches(want, got string, asRoot bool) bool {
	reached := got == "ok"
	denied := strings.HasPrefix(got, "denied")
	switch want {
	case expectOK:
		return reached
	case expectDenied:
		return denied
	case expectRoot:
		if asRoot {
			return reached
		}
		return denied
	case expectAny:
		return reached || denied
	case expectUser:
		if asRoot {
			return denied
		}
		return reached
	}
	return false
}

// formatDiffs writes the differing cells as a table, one line per row of
// the table file and outcome (the classes that share it joined); a probe
// that did not run at all is one line, not one per channel.
func formatDiffs(diffs []policyDiff) string {
	type key struct {
		line         int
		channel, who string
		want, got    string
		notRun       bool
	}
	var order []key
	classes := map[key][]string{}
	for _, d := range diffs {
		k := key{line: d.line, channel: d.channel, who: d.who, want: d.want, got: d.got}
		if strings.HasPrefix(d.got, "denied: the probe did not run") || strings.HasPrefix(d.got, "hung") {
			k = key{who: d.who, got: d.got, notRun: true}
		}
		if _, ok := classes[k]; !ok {
			order = append(order, k)
		}
		if !contains(classes[k], d.class) {
			classes[k] = append(classes[k], d.class)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].notRun != order[j].notRun {
			return order[i].notRun
		}
		if order[i].line != order[j].line {
			return order[i].line < order[j].line
		}
		return order[i].who < order[j].who
	})
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  line\tchannel\tclasses\tas\twant\tgot")
	for _, k := range order {
		if k.notRun {
			fmt.Fprintf(w, "  -\t(every channel)\t%s\t%s\t\t%s\n", strings.Join(classes[k], ","), k.who, k.got)
			continue
		}
		fmt.Fprintf(w, "  %d\t%s\t%s\t%s\t%s\t%s\n", k.line, k.channel, strings.Join(classes[k], ","), k.who, k.want, k.got)
	}
	w.Flush()
	return b.String()
}

// buildProbe builds internal/sandboxprobe once per test binary.
func buildProbe(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the policy table test builds its probe with go: %v", err)
	}
	out := filepath.Join(t.TempDir(), "sandboxprobe")
	cmd := exec.Command(gobin, "build", "-o", out, "./internal/sandboxprobe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the probe: %v\n%s", err, msg)
	}
	return out
}

// policyWorld is what a mechanism column's runs probe: hitl's state dir,
// the fake home, a process playing hitl, the person's terminal and
// listeners outside the working dir.
type policyWorld struct {
	root, home, state, deny string
	fifo, sock, tcp, pts    string
	sysfile, cgroup         string
	standin                 int
}

// observeMechanism runs the probe as every class under mech; why says why
// the machine has no such column.
func observeMechanism(t *testing.T, mech, probe string) (cells probeCells, why string) {
	w := newPolicyWorld(t, probe)
	sb, why := policySandbox(t, mech, w.state)
	if why != "" {
		return nil, why
	}
	cells = probeCells{}
	lingers := map[string]string{}
	var lastEnd time.Time
	timeouts := 0
	for _, class := range policyClasses {
		cell := filepath.Join(w.root, "cell-"+class)
		run := probeRun{
			probe:   probe,
			cwd:     filepath.Join(cell, "cwd"),
			workdir: filepath.Join(cell, "work"),
			tempDir: filepath.Join(cell, "tmp"),
			deny:    w.deny,
			env:     []string{"PATH=/usr/bin:/bin", "HOME=" + w.home},
		}
		outside := filepath.Join(cell, "outside")
		for _, d := range []string{run.cwd, run.workdir, run.tempDir, outside} {
			mkdir(t, d)
		}
		lingers[class] = filepath.Join(run.workdir, "lingered")
		run.args = []string{
			"-workdir", run.workdir, "-outside", outside, "-fifo", w.fifo, "-sock", w.sock,
			"-state", w.state, "-home", w.home, "-deny", w.deny, "-pid", strconv.Itoa(w.standin),
			"-pts", w.pts, "-tcp", w.tcp, "-sysfile", w.sysfile, "-cgroup", w.cgroup,
			"-linger-file", lingers[class], "-v",
		}
		if timeouts >= maxTimeouts {
			cells[class] = notRun(t, probe, fmt.Sprintf("not tried: %d runs before it in this column did not finish", timeouts))
			continue
		}
		var timedOut bool
		stopSibling := startSibling(t, sb, class, run)
		cells[class], timedOut = runProbe(t, sb, class, run)
		stopSibling()
		if timedOut {
			timeouts++
		}
		lastEnd = time.Now()
		w.restoreState(t, mech, class)
	}
	time.Sleep(time.Until(lastEnd.Add(lingerGrace)))
	for _, class := range policyClasses {
		if cells[class]["setsid-survive"] != "ok" {
			continue // the probe could not even start it
		}
		if _, err := os.Stat(lingers[class]); err != nil {
			cells[class]["setsid-survive"] = "denied: ended with its owner"
		}
	}
	return cells, ""
}

// startSibling starts another command of class beside the probe (the
// signal-sibling channel: under the run's sandbox the same init starts
// both), and returns what stops it.
func startSibling(t *testing.T, sb *Sandbox, class string, run probeRun) func() {
	t.Helper()
	spec := policySpec(t, class, run)
	spec.Path, spec.Argv0, spec.Args = "/bin/sleep", "hitl-probe-sibling", []string{"60"}
	spec.Stdout, spec.Stderr = nil, nil
	c := sb.Command(context.Background(), spec)
	if err := c.Start(); err != nil {
		t.Fatalf("the sibling of %s: %v", class, err)
	}
	return func() {
		c.Kill()
		_ = c.Wait()
	}
}

// runProbe runs the probe as class and reads what it reached; a probe that
// cannot run, or does not finish, reaches nothing, and says why in every
// channel. timedOut says it did not finish.
func runProbe(t *testing.T, sb *Sandbox, class string, run probeRun) (got map[string]string, timedOut bool) {
	var stdout, stderr bytes.Buffer
	run.stdout, run.stderr = &stdout, &stderr
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	c := sb.Command(ctx, policySpec(t, class, run))
	done := make(chan error, 1)
	go func() { done <- c.Run() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(probeTimeout + 10*time.Second):
		// The sandbox did not end its child: a hang is a finding, never
		// a reason for the test to hang too.
		c.Kill()
		hung := fmt.Sprintf("hung: the sandbox did not return within %v of its context ending", 10*time.Second)
		t.Errorf("%s: %s", class, hung)
		got = map[string]string{}
		for _, ch := range probeChannels(t, run.probe) {
			got[ch] = hung
		}
		return got, true
	}
	line := lastLine(stdout.String())
	if jerr := json.Unmarshal([]byte(line), &got); jerr == nil && len(got) > 0 {
		return got, false
	}
	why := fmt.Sprintf("%v: %s", err, firstLineOf(stderr.String()))
	if ctx.Err() != nil {
		timedOut = true
		why = fmt.Sprintf("did not finish within %v (%v)", probeTimeout, err)
	}
	t.Logf("%s: the probe did not run: %s (stdout %q, stderr:\n%s)", class, why, line, stderr.String())
	return notRun(t, run.probe, why), timedOut
}

// notRun is a cell where the probe did not run: every channel denied, with
// why.
func notRun(t *testing.T, probe, why string) map[string]string {
	got := map[string]string{}
	for _, ch := range probeChannels(t, probe) {
		got[ch] = "denied: the probe did not run: " + why
	}
	return got
}

// probeChannels are the channels the probe tries (-list).
func probeChannels(t *testing.T, probe string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, probe, "-list").Output()
	var names []string
	if err != nil || json.Unmarshal(out, &names) != nil {
		t.Fatalf("the probe lists no channels: %v %q", err, out)
	}
	return names
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

// newPolicyWorld sets up what the probe tries to reach; everything ends
// with the test.
func newPolicyWorld(t *testing.T, probe string) *policyWorld {
	w := &policyWorld{root: t.TempDir()}
	w.home = filepath.Join(w.root, "home")
	// The state dir's parent is what a child must not rename away.
	w.state = filepath.Join(w.root, "statehome", "hitl")
	mkdir(t, w.state)
	writeFile(t, filepath.Join(w.state, "session.key"), "secret-session-key\n")
	mkdir(t, filepath.Join(w.home, ".ssh"))
	writeFile(t, filepath.Join(w.home, ".ssh", "id_ed25519"), "secret-ssh-key\n")
	writeFile(t, filepath.Join(w.home, ".netrc"), "machine example.com password secret\n")
	// sandbox.New reads the credential stores from hitl's $HOME.
	t.Setenv("HOME", w.home)
	w.deny = filepath.Join(w.root, "secrets", "denied.txt")
	mkdir(t, filepath.Dir(w.deny))
	writeFile(t, w.deny, "secret-denied\n")
	shared := filepath.Join(w.root, "shared")
	mkdir(t, shared)

	// A named pipe with a reader, as hitl's stdin is when a driver feeds
	// it answers.
	w.fifo = filepath.Join(shared, "answers.fifo")
	if err := unix.Mkfifo(w.fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	reader, err := os.OpenFile(w.fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Close() })

	w.sock = filepath.Join(shared, "s.sock")
	serve(t, "unix", w.sock, &w.sock)
	serve(t, "tcp", "127.0.0.1:0", &w.tcp)

	// The person's terminal: a pty the test holds both ends of.
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pty: %v", err)
	}
	t.Cleanup(func() { ptm.Close(); pts.Close() })
	w.pts = pts.Name()
	go func() { _, _ = io.Copy(io.Discard, ptm) }()

	w.sysfile = firstExisting(t, "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/power/state", "/sys/kernel/profiling")
	w.cgroup = firstExisting(t, "/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/unified/cgroup.procs",
		"/sys/fs/cgroup/pids/cgroup.procs", "/sys/fs/cgroup/memory/cgroup.procs")
	w.standin = startStandin(t, probe)
	return w
}

// restoreState puts the state dir's parent back when a child renamed it
// away and did not restore it.
func (w *policyWorld) restoreState(t *testing.T, mech, class string) {
	parent := filepath.Dir(w.state)
	if _, err := os.Stat(filepath.Join(w.state, "session.key")); err == nil {
		return
	}
	t.Errorf("%s %s: the state dir %s is gone after the probe ran", mech, class, w.state)
	if err := os.Rename(parent+".moved", parent); err != nil {
		t.Fatalf("cannot put the state dir back: %v", err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// serve listens on addr, accepting and closing connections until the test
// ends; *bound is the address it got.
func serve(t *testing.T, network, addr string, bound *string) {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	*bound = l.Addr().String()
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

func firstExisting(t *testing.T, paths ...string) string {
	t.Helper()
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o200 != 0 {
			return p
		}
	}
	t.Fatalf("none of %v exists to probe", paths)
	return ""
}

// startStandin starts the process that plays hitl: its pid is what the
// probe tries to read, signal and trace.
func startStandin(t *testing.T, probe string) int {
	t.Helper()
	cmd := exec.Command(probe, "standin")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("said %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("the stand-in for hitl: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stand-in for hitl never got ready")
	}
	return cmd.Process.Pid
}

// observeUnprivileged re-executes this test as policyUser (created if
// missing) and returns what it saw.
func observeUnprivileged(t *testing.T, probe string) *policyObservation {
	t.Helper()
	u := ensureProbeUser(t)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "hitl-policy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testBin := filepath.Join(dir, "sandbox.test")
	childProbe := filepath.Join(dir, "sandboxprobe")
	copyExecutable(t, self, testBin)
	copyExecutable(t, probe, childProbe)
	outDir := filepath.Join(dir, "out")
	mkdir(t, outDir)
	if err := os.Chown(outDir, uid, gid); err != nil {
		t.Fatal(err)
	}
	result := filepath.Join(outDir, "observed.json")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testBin, "-test.run", "^TestPolicyTable$", "-test.count=1", "-test.v", "-test.timeout=7m")
	cmd.Dir = outDir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + outDir, "TMPDIR=" + os.TempDir(),
		policyChildEnv + "=" + result, policyProbeEnv + "=" + childProbe}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
		Setpgid:    true,
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the table as %s (uid %d): %v\n%s", policyUser, uid, err, out)
	}
	data, err := os.ReadFile(result)
	if err != nil {
		t.Fatalf("the table as %s wrote nothing: %v\n%s", policyUser, err, out)
	}
	var obs policyObservation
	if err := json.Unmarshal(data, &obs); err != nil {
		t.Fatalf("the table as %s: %v", policyUser, err)
	}
	return &obs
}

// ensureProbeUser finds policyUser, creating it (a system user without a
// home) when missing.
func ensureProbeUser(t *testing.T) *user.User {
	t.Helper()
	if u, err := user.Lookup(policyUser); err == nil {
		return u
	}
	useradd, err := exec.LookPath("useradd")
	if err != nil {
		t.Fatalf("running as root, the policy table test runs as an unprivileged user too, but cannot create %s: %v", policyUser, err)
	}
	out, err := exec.Command(useradd, "--system", "--no-create-home", "--home-dir", "/nonexistent",
		"--shell", "/usr/sbin/nologin", policyUser).CombinedOutput()
	u, lerr := user.Lookup(policyUser)
	if lerr != nil {
		t.Fatalf("creating the user %s: %v %s", policyUser, err, out)
	}
	return u
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
