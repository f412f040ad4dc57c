package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// view is what one child may reach, built from its class's policy and the
// paths of its Spec (DESIGN §15: grant, never subtract). Every mechanism
// builds it: bwrap as mounts, Landlock as rules, seccomp as a filter. It
// holds paths only, never a secret: the Landlock helper gets it as JSON.
type view struct {
	Class    Class  `json:"class"`
	StateDir string `json:"state_dir,omitempty"`
	// StateLinks are the symbolic links on the way to the state dir as
	// hitl names it (each run resolves that name again): no child may
	// rename nor replace one, which would give later runs a state dir
	// of its choosing.
	StateLinks []string `json:"state_links,omitempty"`
	// Writable are the directories a ClassAuto child may write in (the
	// run's working directories, its temp dir), real paths, none of them
	// inside a directory no child may write.
	Writable []string `json:"writable,omitempty"`
	// Hidden are the paths a ClassAuto child may not read (credential
	// stores, deny_read), real paths, and, for every class, the other
	// paths the machine's mounts give those and the state dir.
	Hidden  []string `json:"hidden,omitempty"`
	Network bool     `json:"network,omitempty"`
	// InBwrap: the Landlock helper runs inside bwrap (MechLayered).
	InBwrap bool `json:"in_bwrap,omitempty"`
	// PidNS: the Landlock helper starts the program in a new PID
	// namespace (MechLandlock, where the kernel allows one).
	PidNS bool `json:"pidns,omitempty"`
	// Dir is where the child starts.
	Dir string `json:"dir,omitempty"`
	// LoaderEnv are the child's dynamic loader variables, set only once
	// the helper is confined.
	LoaderEnv []string `json:"loader_env,omitempty"`
	// MaxRunning bounds the commands a per-run init runs at once
	// (maxRunning).
	MaxRunning int `json:"max_running,omitempty"`
	// FailPrepare makes a per-run init fail every command's sandbox
	// (failPrepare: the fallback's test).
	FailPrepare bool `json:"fail_prepare,omitempty"`
	// FailStart makes a per-run init fail before it is ready (failStart:
	// the fallback's test, for an init that ran).
	FailStart bool `json:"fail_start,omitempty"`
	// StallStart makes a per-run init wait, saying nothing, where it
	// would get ready (stallStart: the start timeout's test).
	StallStart bool `json:"stall_start,omitempty"`
	// ThreadSpawns has a per-run init's workers' threads start the
	// commands where their holders could (threadSpawns: that path's
	// tests, on amd64).
	ThreadSpawns bool `json:"thread_spawns,omitempty"`
}

// failPrepare: tests make the run's sandbox fail to prepare commands.
var failPrepare = false

// failStart: tests make the run's init fail before it is ready.
var failStart = false

// stallStart: tests make the run's init silent, never ready.
var stallStart = false

// threadSpawns: tests have the worker's thread start the commands where
// the holder could (holderSpawns).
var threadSpawns = false

// maxRunning bounds the commands of one per-run init at once: each holds a
// thread of the init, and a process holds at most 10,000; one more is
// refused, alone (tests lower it).
var maxRunning = 1000

// neverWritable are the trees no child may write, whatever its class: the
// kernel's settings and devices (/proc/sys, /sys with its cgroup files,
// /dev but the few devices granted one by one).
var neverWritable = []string{"/proc", "/sys", "/dev"}

func (v view) policy() policy { return policyOf(v.Class) }

// viewOf builds the view of spec.
func (s *Sandbox) viewOf(spec Spec) view {
	v := view{Class: spec.Class, StateDir: s.StateDir(), Dir: spec.Dir, LoaderEnv: loaderEnv(spec.Env)}
	var mounts []mountEntry
	if s != nil {
		// The state dir by every other path the machine's mounts give
		// it, and the links on the way to it.
		v.StateLinks, v.Hidden, mounts = s.stateLinks, slices.Clone(s.stateAliases), s.mounts
	}
	p := v.policy()
	v.Network = p.network || spec.Network
	if p.writeAll {
		return v
	}
	for _, d := range append(slices.Clone(spec.Writable), spec.TempDir) {
		d = realPath(d)
		if d == "" || slices.Contains(v.Writable, d) || !writableDir(d, v.StateDir) {
			continue
		}
		v.Writable = append(v.Writable, d)
	}
	if !p.credentials {
		var creds []string
		if s != nil {
			creds = s.creds
		}
		for _, h := range append(slices.Clone(creds), spec.DenyRead...) {
			if r := realPath(h); r != "" && !slices.Contains(v.Hidden, r) {
				v.Hidden = append(v.Hidden, r)
				for _, a := range aliasesOf(r, mounts) {
					if !slices.Contains(v.Hidden, a) {
						v.Hidden = append(v.Hidden, a)
					}
				}
			}
			// The path as named too: a link planted later cannot
			// point a name at what it hid.
			if a, err := filepath.Abs(h); err == nil && !slices.Contains(v.Hidden, a) {
				v.Hidden = append(v.Hidden, a)
			}
		}
	}
	return v
}

// writableDir says whether a ClassAuto child may be granted writing in d:
// never a tree no child may write, nor the state dir or what holds it.
func writableDir(d, stateDir string) bool {
	for _, n := range neverWritable {
		if Within(d, n) {
			return false
		}
	}
	if stateDir != "" && Within(d, stateDir) {
		return false
	}
	return true
}

// realPath is p absolute with its symbolic links resolved, as far as it
// exists ("" for "").
func realPath(p string) string {
	if p == "" {
		return ""
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// Within says whether path is dir or lies beneath it (both clean and
// absolute).
func Within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || len(path) > len(dir) && path[:len(dir)] == dir && path[len(dir)] == '/'
}

// linksOnTheWay are the symbolic links met on the way to p (absolute),
// each named by its directory's real path and its own name.
func linksOnTheWay(p string) []string {
	var links []string
	cur := "/"
	for _, name := range strings.Split(strings.TrimPrefix(filepath.Clean(p), "/"), "/") {
		if name == "" {
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		if err != nil {
			break
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			links = append(links, next)
			if next, err = filepath.EvalSymlinks(next); err != nil {
				break
			}
		}
		cur = next
	}
	return links
}

// ancestors are the directories above p, nearest first, "/" excluded.
func ancestors(p string) []string {
	var out []string
	for d := filepath.Dir(p); d != "/" && d != "." && d != p; d = filepath.Dir(d) {
		out = append(out, d)
		p = d
	}
	return out
}

// check refuses a view the helper could not receive whole: its paths go as
// JSON, which turns bytes that are not UTF-8 into U+FFFD, and a rule on a
// path that does not exist would protect nothing (fail closed).
func (v view) check() error {
	paths := append([]string{v.StateDir, v.Dir}, v.Writable...)
	paths = append(paths, v.StateLinks...)
	paths = append(paths, v.Hidden...)
	for _, p := range paths {
		if !utf8.ValidString(p) {
			return fmt.Errorf("sandbox: the path %q is not UTF-8, which the sandbox cannot protect: rename it (or run from another directory)", p)
		}
	}
	return nil
}
