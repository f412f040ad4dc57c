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
	MechBwrap    Mechanism = "bwrap"
	MechLandlock Mechanism = "landlock"
	MechNone     Mechanism = "none"
)

// Access is how far a child may write.
type Access int

const (
	// Seen is a program a person approved, or the author wrote (an approved
	// or --yolo command, a script tool, a hook, an MCP server): it keeps
	// the write access the user has, outside hitl's state dir.
	Seen Access = iota
	// Unseen is a command nobody saw (auto-allowed by a rule): it may write
	// only in its working directory, its private temp dir and /dev/null.
	Unseen
)

// Sandbox is the run's choice of mechanism, made once.
type Sandbox struct {
	mech     Mechanism
	mode     Mode
	stateDir string   // hidden from every child
	bwrap    string   // bwrap's path, under MechBwrap
	self     string   // hitl's executable, under MechLandlock
	pinned   *os.File // the copy of bwrap the run starts (pinBwrap)
	// Why says why the mechanism is not the best one (bwrap cannot run,
	// and so Landlock; neither works), or "" when nothing needs saying.
	Why string
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
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		s.stateDir = abs
	}
	c, err := Probe(mode)
	if err != nil {
		return nil, err
	}
	s.mech, s.bwrap, s.self, s.Why = c.Mechanism, c.bwrap, c.self, c.Why
	if s.mech == MechBwrap {
		f, err := pinBwrap(s.bwrap)
		if err != nil {
			return nil, fmt.Errorf("sandbox: cannot keep a copy of %s: %w", s.bwrap, err)
		}
		s.pinned = f
		s.bwrap = fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	}
	return s, nil
}

// probes find out what the machine has (tests replace them).
var probes = struct{ bwrap, landlock func() (string, string) }{probeBwrap, probeLandlock}

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
	if mode == Off {
		return Choice{Mechanism: MechNone}, nil
	}
	var bwrapWhy string
	if mode == Auto || mode == Bwrap {
		path, why := probes.bwrap()
		if why == "" {
			return Choice{Mechanism: MechBwrap, bwrap: path}, nil
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
// only inside a sandbox, or when the author or operator opted out of it.
// A nil Sandbox is no sandbox, not opted out.
func (s *Sandbox) AllowRulesApply() bool {
	return s != nil && (s.mech != MechNone || s.mode == Off)
}

// StateDir is the directory no child can read.
func (s *Sandbox) StateDir() string { return s.stateDir }
