// Package sandbox is how hitl starts every child process (DESIGN §12): shell
// commands, script tools, post_edit and hook commands, stdio MCP servers and
// approver programs. Nothing a child does can reach hitl: it has no
// controlling terminal, its stdin is /dev/null (an MCP server keeps its
// pipe), and it cannot see hitl's /proc entries, another child's, or hitl's
// state directory. On Linux that is a bubblewrap PID namespace when bwrap
// can run, else a Landlock domain applied by a small re-exec of hitl itself.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mode is what the agent file (permissions.sandbox) or the command line
// (--no-sandbox) asks for.
type Mode string

const (
	// Auto uses bwrap where it can run, else Landlock, else nothing.
	Auto Mode = "auto"
	// Bwrap requires bubblewrap.
	Bwrap Mode = "bwrap"
	// Landlock requires a Landlock domain (no bwrap).
	Landlock Mode = "landlock"
	// Off is the explicit opt-out: children run with a new session only.
	Off Mode = "off"
)

// Modes are the valid values of permissions.sandbox.
var Modes = []Mode{Auto, Bwrap, Landlock, Off}

// ParseMode reads a permissions.sandbox value ("" is Auto).
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Auto, nil
	}
	for _, m := range Modes {
		if Mode(s) == m {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown sandbox %q: valid values are %s", s, strings.Join(names, ", "))
}

// Mechanism is what confines the children of a run, as run.started and the
// journal record it.
type Mechanism string

const (
	// MechLayered is bwrap's namespaces with a Landlock domain applied
	// inside them (DESIGN §15): what a mount cannot express (writing into
	// a named pipe, renaming a parent of the state dir) Landlock refuses.
	MechLayered  Mechanism = "bwrap+landlock"
	MechBwrap    Mechanism = "bwrap"
	MechLandlock Mechanism = "landlock"
	MechNone     Mechanism = "none"
)

// Class is who a child is (DESIGN §15): each class has one written policy,
// policyOf, which every mechanism builds.
type Class int

const (
	// ClassAuto is a command nobody saw (auto-allowed by a rule): it may
	// write only in the run's working directory (Spec.Writable), its
	// private temp dir and /dev/null, has no network unless a rule grants
	// it, cannot read credential stores nor connect to a unix socket.
	ClassAuto Class = iota
	// ClassApproved is a command a person approved, or --yolo ran.
	ClassApproved
	// ClassScript is a script tool's command (the author wrote it).
	ClassScript
	// ClassHook is a hook or post_edit command (the author wrote it).
	ClassHook
	// ClassApprover is an approver program (the operator named it).
	ClassApprover
	// ClassMCP is a stdio MCP server (the author named it).
	ClassMCP
)

// Classes are every class, in the policy table's order.
var Classes = []Class{ClassAuto, ClassApproved, ClassScript, ClassHook, ClassApprover, ClassMCP}

func (c Class) String() string {
	switch c {
	case ClassAuto:
		return "auto"
	case ClassApproved:
		return "approved"
	case ClassScript:
		return "script"
	case ClassHook:
		return "hook"
	case ClassApprover:
		return "approver"
	case ClassMCP:
		return "mcp"
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// policy is what a class may do, beyond what no child may ever do (write
// /proc/sys, /sys, device nodes but null, zero, full, random, urandom, the
// state dir and every directory above it; read the state dir; reach hitl's
// /proc entries, signal or trace it; open a terminal; mount).
type policy struct {
	// writeAll: write where the user may; else only Spec.Writable and
	// Spec.TempDir.
	writeAll bool
	// network: sockets other than unix ones (else only with Spec.Network).
	network bool
	// unixSockets: create unix sockets (connect to a listener by path).
	unixSockets bool
	// credentials: read the credential stores and Spec.DenyRead.
	credentials bool
	// namespaces: make user and mount namespaces (a rootless container
	// a person approved).
	namespaces bool
}

// policyOf is each class's policy: a person saw, or the author or operator
// wrote, every class but ClassAuto.
func policyOf(c Class) policy {
	if c == ClassAuto {
		return policy{}
	}
	return policy{writeAll: true, network: true, unixSockets: true, credentials: true, namespaces: true}
}

// Sandbox is the run's choice of mechanism, made once.
type Sandbox struct {
	mech     Mechanism
	mode     Mode
	stateDir string // hidden from every child
	// stateLinks are the links on the way to stateDir as it was named.
	stateLinks []string
	bwrap      string   // bwrap's path, under MechBwrap
	self       string   // hitl's executable, under MechLandlock
	pinned     *os.File // the copy of bwrap the run starts (pinBwrap)
	// exe is hitl's own executable, open, under MechLayered: bwrap starts
	// the Landlock helper from it (/proc/self/fd/3), so a command a person
	// approved may replace the file at its path, never what confines.
	exe *os.File
	// creds are the credential stores of the user's home: unreadable to
	// ClassAuto.
	creds []string
	// mounts are the machine's, read once (aliasesOf); stateAliases
	// the other paths they give the state dir.
	mounts       []mountEntry
	stateAliases []string
	// pidns: under MechLandlock, children start in a new PID namespace
	// (root, or a user namespace), so none outlives its owner.
	pidns bool
	// Why says why the mechanism is not the best one (bwrap cannot run,
	// and so Landlock; neither works), or "" when nothing needs saying.
	Why string
	// Notify, when set, is told once why the run's sandbox (one per run
	// and view, DESIGN §15) could not start after all.
	Notify func(msg string)
	perRun perRun
	temp   runTemp
}

// New chooses the mechanism for mode. stateDir is hitl's state directory
// (session key, sessions, kept MACs); it is created (0700) if missing, so
// that no child can create it first. An error is a mode that cannot be had
// (bwrap asked for and not runnable), a usage error.
func New(mode Mode, stateDir string) (*Sandbox, error) {
	s := &Sandbox{mode: mode, mech: MechNone}
	if stateDir != "" {
		abs, err := filepath.Abs(stateDir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: state dir: %w", err)
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: cannot make the state dir %s: %w", abs, err)
		}
		s.stateLinks = linksOnTheWay(abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		s.stateDir = abs
	}
	bwrapProbe := probes.bwrap
	if probes.cached {
		bwrapProbe = cachedProbe(s.stateDir, bwrapProbe)
	}
	c, err := probeWith(mode, bwrapProbe)
	if err != nil {
		return nil, err
	}
	s.mech, s.bwrap, s.self, s.Why = c.Mechanism, c.bwrap, c.self, c.Why
	s.creds = credentialStores(homeDir())
	s.mounts = machineMounts()
	if s.stateDir != "" {
		s.stateAliases = aliasesOf(s.stateDir, s.mounts)
	}
	s.pidns = s.mech == MechLandlock && pidnsWorks()
	if s.mech == MechLandlock && !s.pidns {
		why := "under Landlock alone without root, a process a command starts in a session of its own can outlive it (install bubblewrap: apt-get install bubblewrap)"
		if s.Why != "" {
			why = s.Why + "; " + why
		}
		s.Why = why
	}
	if !perRunEnabled {
		s.perRun.off = true
	} else if why := perRunWhy(s.mech, s.pidns); why != "" {
		s.perRun.off = true
		if s.mech == MechLayered || s.mech == MechLandlock {
			s.Why = joinWhy(s.Why, why)
		}
	}
	if s.mech == MechLayered {
		f, err := os.Open("/proc/self/exe")
		if err != nil {
			return nil, fmt.Errorf("sandbox: cannot open hitl's own executable: %w", err)
		}
		s.exe = f
	}
	if s.mech == MechBwrap || s.mech == MechLayered {
		f, err := pinBwrap(s.bwrap)
		if err != nil {
			return nil, fmt.Errorf("sandbox: cannot keep a copy of %s: %w", s.bwrap, err)
		}
		s.pinned = f
		s.bwrap = fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	}
	return s, nil
}

// perRunEnabled: commands start in the run's sandbox (one per run and
// view) where it can be had; tests turn it off to check a sandbox per
// command, the fallback.
var perRunEnabled = true

func joinWhy(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// probes find out what the machine has (tests replace them, and turn
// cached off: a run trusts the state dir's word that bwrap runs, cachedProbe).
var probes = struct {
	bwrap, landlock func() (string, string)
	cached          bool
}{probeBwrap, probeLandlock, true}

// Choice is the mechanism a mode gets on this machine.
type Choice struct {
	Mechanism Mechanism
	// Why says why the mechanism is not the best one, or "".
	Why         string
	bwrap, self string
}

// Probe finds the mechanism mode gets on this machine, touching nothing
// (hitl validate). An error is a mechanism asked for by name that cannot
// be had.
func Probe(mode Mode) (Choice, error) {
	return probeWith(mode, probes.bwrap)
}

func probeWith(mode Mode, bwrapProbe func() (string, string)) (Choice, error) {
	if mode == Off {
		return Choice{Mechanism: MechNone}, nil
	}
	var bwrapWhy string
	if mode == Auto || mode == Bwrap {
		path, why := bwrapProbe()
		if why == "" {
			self, landlockWhy := probes.landlock()
			if landlockWhy == "" {
				return Choice{Mechanism: MechLayered, bwrap: path, self: self}, nil
			}
			return Choice{Mechanism: MechBwrap, bwrap: path, Why: "bwrap runs without Landlock (" + landlockWhy +
				"): a mount cannot stop a command writing into a named pipe or connecting to a unix socket, " +
				"so allow rules do not apply and every command is asked (docs/security.md)"}, nil
		}
		bwrapWhy = why
		if mode == Bwrap {
			return Choice{}, errors.New("sandbox: bwrap was asked for (permissions.sandbox: bwrap) but " + why)
		}
	}
	self, landlockWhy := probes.landlock()
	if landlockWhy == "" {
		c := Choice{Mechanism: MechLandlock, self: self}
		if bwrapWhy != "" && !strings.HasPrefix(bwrapWhy, "bwrap is not installed") {
			c.Why = bwrapWhy + "; using Landlock instead"
		}
		return c, nil
	}
	if mode == Landlock {
		return Choice{}, errors.New("sandbox: Landlock was asked for (permissions.sandbox: landlock) but " + landlockWhy)
	}
	return Choice{Mechanism: MechNone, Why: fmt.Sprintf("no sandbox for commands: %s, and %s; allow rules do not apply, every command is asked (permissions: {sandbox: off} or --no-sandbox runs without one)", bwrapWhy, landlockWhy)}, nil
}

// Mechanism is what confines the children.
func (s *Sandbox) Mechanism() Mechanism {
	if s == nil {
		return MechNone
	}
	return s.mech
}

// AllowRulesApply says whether allow rules may let a command run unasked:
// only inside a sandbox that contains every channel of ClassAuto's policy
// (Landlock, alone or inside bwrap; bwrap alone cannot stop writing into a
// named pipe), or when the author or operator opted out of it. A nil
// Sandbox is no sandbox, not opted out.
func (s *Sandbox) AllowRulesApply() bool {
	return s != nil && (s.mech == MechLayered || s.mech == MechLandlock || s.mode == Off)
}

// bwrapped says whether bwrap starts the children (alone or layered).
func (s *Sandbox) bwrapped() bool {
	m := s.Mechanism()
	return m == MechBwrap || m == MechLayered
}

// StateDir is the directory no child can read.
func (s *Sandbox) StateDir() string { return s.stateDir }

// homeDir is the user's home, where the credential stores are.
func homeDir() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// credentialFiles are the credential stores under a home directory that a
// command nobody saw can never read (docs/security.md).
var credentialFiles = []string{
	".ssh", ".aws", ".gnupg", ".config/gh", ".netrc", ".git-credentials",
	".docker/config.json", ".kube",
}

// CredentialStores are the user's credential stores, as absolute paths:
// what no command nobody saw reads, nor a tool unasked.
func CredentialStores() []string { return credentialStores(homeDir()) }

// credentialStores are the credential stores of home, as absolute paths.
func credentialStores(home string) []string {
	if home == "" || !filepath.IsAbs(home) {
		return nil
	}
	out := make([]string, len(credentialFiles))
	for i, f := range credentialFiles {
		out[i] = filepath.Join(home, f)
	}
	return out
}
