// Package shell is the shell toolset (cagent's shell tool, seed 002): the
// model runs a command line with shell{cmd, cwd?, timeout?} and gets its
// output (stdout and stderr merged, in order).
//
// A command runs only when permissions allow it, --yolo approves it, it was
// approved for the session, or a person approves it when asked; with nobody
// to ask it is denied and the model is told why (DESIGN §1, §4, §7).
package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/prompt"
	"mvdan.cc/sh/v3/syntax"
)

// Name is the tool's name.
const Name = "shell"

// Defaults.
const (
	DefaultTimeout = 30 * time.Second
	DefaultShell   = "/bin/sh"
	// DefaultGrace is how long a process group has between SIGTERM and
	// SIGKILL.
	DefaultGrace = 2 * time.Second
	// maxTimeout bounds a call's timeout (and keeps it from overflowing).
	maxTimeout = 24 * time.Hour
	// MaxLine bounds a command line, in bytes: the longest argument Linux
	// passes to a program (sh -c LINE), so no line that could run is
	// refused, and checking a line stays within bounded memory.
	MaxLine = 128<<10 - 1
)

// Checker decides shell lines (permissions.Checker): Shell before a line
// runs, Recheck before each command of a line allowed unasked.
type Checker interface {
	Shell(tool, line string, args map[string]any, d permissions.Dialect) permissions.ShellVerdict
	Recheck(tool string, argv []string, args map[string]any) error
	// Network says whether a permissions.network rule gives a command
	// run unasked the network.
	Network(tool string, argv []string, args map[string]any) bool
	// Allows says whether an allow rule may let the tool run a line
	// unasked.
	Allows(tool string) bool
}

// Secrets are the run's secret answers (prompt.Secrets).
type Secrets interface {
	Env() []string
	Mask(text string) string
}

// Options configure the tool: the toolset's keys and what the run provides.
type Options struct {
	// Env is added to the commands' environment (the toolset's env, with
	// ${VAR} already expanded).
	Env map[string]string
	// WorkingDir is the toolset's working_dir, relative to BaseDir.
	WorkingDir string
	// BaseDir is --working-dir (default: the process's directory).
	BaseDir string
	// Timeout bounds a command (default 30 s); a call's timeout overrides.
	Timeout time.Duration
	// Shell runs the line as SHELL -c LINE (default /bin/sh).
	Shell string
	// Grace is the time between SIGTERM and SIGKILL (default 2 s).
	Grace time.Duration
	// Hide names variables of hitl's environment that commands must not
	// inherit (the model API keys); the toolset's Env may still set them.
	Hide []string

	Asker       prompt.Questioner
	Secrets     Secrets
	Permissions Checker
	// Yolo runs what no deny or ask rule stops, without asking.
	Yolo bool
	// Sandbox starts every command (DESIGN §12); without a mechanism,
	// allow rules do not let a line run unasked.
	Sandbox *sandbox.Sandbox
	// Class is the sandbox class of the lines run as written: a person
	// approved them (the default), or the author wrote them (a script
	// tool's). Lines run unasked are sandbox.ClassAuto.
	Class sandbox.Class
	// DenyRead are paths a line run unasked cannot read
	// (permissions.deny_read), besides the credential stores.
	DenyRead []string
	// Approvals, when set, holds the lines approved for the session,
	// shared with the other agents' shell tools (nil: the tool's own).
	Approvals *Approvals
	// OnApprove, if set, is told of each command line approved for the
	// session, as its key (approvalKey: the line, the directory it runs in): the
	// session journal keeps them for hitl resume, which gives them to
	// Restore.
	OnApprove func(line string)
}

// Tool is the shell tool.
type Tool struct {
	opts    Options
	dialect permissions.Dialect

	approved *Approvals // the lines approved for the session
	// runRoot is the run's working directory (--working-dir, else the
	// process's), its links resolved when the tool was made; absRoot the
	// toolset's working_dir when the author named a place outside it
	// (absolute, or ../), resolved then too. A link the model plants
	// later moves neither.
	runRoot, absRoot string
}

// New returns the tool.
func New(o Options) *Tool {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Shell == "" {
		o.Shell = DefaultShell
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Class == sandbox.ClassAuto {
		o.Class = sandbox.ClassApproved
	}
	approved := o.Approvals
	if approved == nil {
		approved = &Approvals{}
	}
	t := &Tool{opts: o, dialect: DialectOf(o.Shell), approved: approved}
	t.runRoot, t.absRoot = roots(o)
	t.prepare()
	return t
}

// Prepare has the run's sandbox for the lines a toolset of o would run
// unasked started in the background, as New does: for a run that knows
// its toolsets before it builds them (its journal, hooks and servers
// first), so that the sandbox is ready by its first line.
func Prepare(o Options) {
	t := &Tool{opts: o}
	t.runRoot, t.absRoot = roots(o)
	t.prepare()
}

// roots are the run's working directory (--working-dir, else the
// process's) and the toolset's working_dir where the author named a place
// outside it (absolute, or ../), "" if not, each resolved now.
func roots(o Options) (runRoot, absRoot string) {
	wd, err := os.Getwd()
	if err != nil {
		return "", ""
	}
	base := wd
	if o.BaseDir != "" {
		base = filepath.Join(wd, o.BaseDir)
		if filepath.IsAbs(o.BaseDir) {
			base = o.BaseDir
		}
	}
	base = filepath.Clean(base)
	runRoot = resolved(base)
	// An author's working_dir that names a place outside the run's
	// working directory (absolute, or ../) is theirs as written.
	if wd := o.WorkingDir; wd != "" {
		named := filepath.Join(base, wd)
		if filepath.IsAbs(wd) {
			named = filepath.Clean(wd)
		}
		if !sandbox.Within(named, base) {
			absRoot = resolved(named)
		}
	}
	return runRoot, absRoot
}

// prepare starts the run's sandbox of the lines run unasked, where allow
// rules may run some.
func (t *Tool) prepare() {
	if t.opts.Sandbox != nil && t.opts.Permissions != nil && t.opts.Permissions.Allows(Name) {
		t.prepareSandbox()
	}
}

// prepareSandbox has the run's sandbox for lines run unasked started in
// the background: the same view as execProgram's (no network).
func (t *Tool) prepareSandbox() {
	root, _ := t.writableRoot()
	if root == "" {
		return
	}
	tmp, err := t.tempDir(root)
	if err != nil {
		return
	}
	t.opts.Sandbox.Prepare(sandbox.Spec{
		Class: sandbox.ClassAuto, Writable: []string{root}, TempDir: tmp, DenyRead: t.opts.DenyRead,
	})
}

// writableRoot is where a line run unasked may write (DESIGN §15): the
// toolset's working directory as the author wrote it — one outside the
// run's working directory as it resolved when the tool was made, one
// inside it only while it resolves inside it (a link planted there by an
// earlier command cannot point it at /etc). "" with why when there is none.
func (t *Tool) writableRoot() (root, why string) {
	if t.absRoot != "" {
		return t.absRoot, ""
	}
	if t.runRoot == "" {
		return "", "the run's working directory cannot be found, so allow rules do not apply"
	}
	if t.opts.WorkingDir == "" {
		return t.runRoot, ""
	}
	dir := resolved(filepath.Join(t.runRoot, t.opts.WorkingDir))
	if dir == "" || !sandbox.Within(dir, t.runRoot) {
		return "", fmt.Sprintf("the toolset's working directory %s does not resolve inside the run's working directory %s, so allow rules do not apply", t.opts.WorkingDir, t.runRoot)
	}
	return dir, ""
}

func (t *Tool) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name: Name,
		Description: "Run a shell command line and return its output (stdout and stderr merged). " +
			"Commands run non-interactively: stdin is empty, so never wait for input. " +
			"A command may need a person's approval; a refusal comes back as an error result that says why. " +
			fmt.Sprintf("Output longer than %d characters is cut in the middle. ", MaxOutput) +
			"Secret answers are available as environment variables $HITL_SECRET_<n>.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"cmd":{"type":"string","description":"The shell command to execute."},` +
			`"cwd":{"type":"string","description":"The working directory to execute the command in (default: the toolset's working directory); relative paths are relative to it."},` +
			`"timeout":{"type":"integer","minimum":1,"description":"Command execution timeout in seconds (default: ` + fmt.Sprint(int(t.opts.Timeout/time.Second)) + `)."}},` +
			`"required":["cmd"]}`),
	}
}

type args struct {
	Cmd     string   `json:"cmd"`
	Cwd     string   `json:"cwd"`
	Timeout *float64 `json:"timeout"`
}

// Call checks the command against the permissions, asks when it must, and
// runs it. Refusals are error results; the run's end (ctx) and a person
// interrupting at the approval prompt are errors.
func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a args
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return errorResult("invalid arguments: %v", err), nil
	}
	if strings.TrimSpace(a.Cmd) == "" {
		return errorResult("cmd is empty: give the command line to run"), nil
	}
	if strings.IndexByte(a.Cmd, 0) >= 0 {
		return errorResult("the command line holds a NUL byte, which no shell can take"), nil
	}
	if len(a.Cmd) > MaxLine {
		return errorResult("the command line is %d bytes long; at most %d are taken: write a long script to a file instead", len(a.Cmd), MaxLine), nil
	}
	dir, err := t.dir(a.Cwd)
	if err != nil {
		return errorResult("%v", err), nil
	}
	timeout := t.opts.Timeout
	if a.Timeout != nil {
		if *a.Timeout <= 0 {
			return errorResult("timeout must be a positive number of seconds"), nil
		}
		timeout = time.Duration(min(*a.Timeout, maxTimeout.Seconds()) * float64(time.Second))
	}
	var callArgs map[string]any
	_ = json.Unmarshal(call.Arguments, &callArgs)
	p, err := t.permit(ctx, call, a.Cmd, a.Cwd, dir, callArgs)
	switch {
	case err != nil || p.refusal != nil:
		return *p.refusal, err
	case p.program != nil:
		// Allowed unasked: what was checked is what runs.
		return t.runChecked(ctx, p.program, dir, timeout, callArgs)
	}
	return t.run(ctx, a.Cmd, dir, timeout, p.secrets)
}

// permission is how a line may run: refused (refusal set), from the checked
// tree (program set), or in the toolset's shell as written.
type permission struct {
	refusal *exec.Result
	program *syntax.File
	// secrets: the line gets the HITL_SECRET_<n> variables. Only a line
	// a person approved (now, or for the session) or --yolo (every line
	// approved in advance, by the person who started the run) gets them:
	// never one a hook approved (prompt.Admit, rule.go).
	secrets bool
}

func refused(r exec.Result) permission { return permission{refusal: &r} }

// permit decides whether the command may run: deny wins over ask over allow;
// then --yolo, then an approval for the session, then a person.
func (t *Tool) permit(ctx context.Context, call exec.ToolCall, line, cwd, dir string, callArgs map[string]any) (permission, error) {
	v := permissions.ShellVerdict{Verdict: permissions.Verdict{Reason: "no permissions rule allows it"}}
	if t.opts.Permissions != nil {
		v = t.opts.Permissions.Shell(Name, line, callArgs, t.dialect)
	}
	reason := v.Reason
	switch v.Decision {
	case permissions.Deny:
		return refused(errorResult("the command was not run: it is denied by the permissions rule %q", v.Rule)), nil
	case permissions.Allow:
		outside := t.outside(dir)
		if t.opts.Sandbox.AllowRulesApply() && outside == "" {
			return permission{program: v.Program}, nil
		}
		if t.opts.Yolo {
			return permission{secrets: true}, nil
		}
		reason = "no sandbox can confine commands here, so allow rules do not apply (docs/security.md)"
		if outside != "" {
			reason = outside
		}
	case permissions.Ask:
		reason = fmt.Sprintf("the permissions rule %q asks every time", v.Rule)
	default:
		if t.opts.Yolo {
			return permission{secrets: true}, nil
		}
	}
	// An ask rule asks every time: no approval for the session answers
	// it, and none is offered.
	everyTime := v.Decision == permissions.Ask
	key := t.approvalKey(ctx, line, dir)
	if !everyTime && t.isApproved(key) {
		// Only a person approves for the session (a hook answers once).
		return permission{secrets: true}, nil
	}
	q := prompt.ApprovalQuestion(fmt.Sprintf("Run this command?\n\n%s\n\nin %s", line, dir), !everyTime)
	q.Subject, q.Dir = line, dir
	q.CallID, q.Tool, q.Hint = call.ID, Name, reason
	// A line that names a secret hands it over: a person approves it,
	// as one no sandbox confines (rule.go).
	q.HandsSecret = prompt.MentionsSecret(line)
	q.PersonOnly = q.HandsSecret || !t.opts.Sandbox.AllowRulesApply()
	ap, err := prompt.AskApproval(ctx, t.opts.Asker, q, "command")
	if err != nil {
		return refused(exec.Result{}), err
	}
	if !ap.Approved {
		return refused(exec.Result{IsError: true, Text: ap.Refusal}), nil
	}
	if ap.Session && ap.Person && !everyTime {
		t.approved.add(key)
		if t.opts.OnApprove != nil {
			t.opts.OnApprove(key)
		}
	}
	return permission{secrets: ap.Person}, nil
}

// tempDir is the private temp dir (TMPDIR) of the lines run unasked that
// write in root: the run's (its sandbox's) for that root, which every
// toolset of the run with that root shares, so their lines run in one
// sandbox of the run.
func (t *Tool) tempDir(root string) (string, error) { return t.opts.Sandbox.TempDir(root) }

// approvalKey names a line approved for the session where it runs: the
// line, the directory it runs in resolved (the call's cwd, the toolset's
// working_dir and --working-dir applied; relative to the run's directory
// when inside it, so a session keeps its approvals when the checkout
// moves), and, for a toolset that changes what a line does (its own env
// or shell), the agent whose toolset asked. The same line in another
// directory, or by another agent's toolset of that kind, is asked again
// (docs/approvals.md). A line never holds a NUL byte, so keys cannot
// collide.
func (t *Tool) approvalKey(ctx context.Context, line, dir string) string {
	key := line + "\x00dir=" + t.keyDir(dir)
	if len(t.opts.Env) > 0 || t.opts.Shell != DefaultShell {
		key += "\x00agent=" + prompt.AgentOf(ctx).Agent
	}
	return key
}

// keyDir is dir relative to the run's directory (--working-dir, else the
// process's) when inside it, else dir.
func (t *Tool) keyDir(dir string) string {
	base := t.opts.BaseDir
	if base == "" || !filepath.IsAbs(base) {
		wd, err := os.Getwd()
		if err != nil {
			return dir
		}
		base = filepath.Join(wd, base)
	}
	rel, err := filepath.Rel(filepath.Clean(base), dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return dir
	}
	return rel
}

func (t *Tool) isApproved(key string) bool { return t.approved.has(key) }

// Approved returns the keys of the command lines approved for the session
// (approvalKey), sorted, for the session journal.
func (t *Tool) Approved() []string { return t.approved.list() }

// Restore adds the keys of command lines approved for the session (a
// resumed run): what OnApprove was told.
func (t *Tool) Restore(lines []string) {
	for _, l := range lines {
		t.approved.add(l)
	}
}

// Approvals are the command lines approved for the session (their
// approvalKey). The agents of a run share one (DESIGN §13): a line a
// person approved for the session runs unasked in every agent's shell.
type Approvals struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (a *Approvals) add(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.keys == nil {
		a.keys = map[string]bool{}
	}
	a.keys[key] = true
}

func (a *Approvals) has(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.keys[key]
}

func (a *Approvals) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.keys))
	for k := range a.keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// outside says why a line that an allow rule matches is asked all the
// same when it would run in dir: a directory (its links resolved) outside
// the run's working directory, which the model chose; "" when dir lies
// inside it. A line run unasked writes only in the working directory,
// never in one because the model named it (DESIGN §15).
func (t *Tool) outside(dir string) string {
	root, why := t.writableRoot()
	if root == "" {
		return why
	}
	if realDir := resolved(dir); realDir == "" || !sandbox.Within(realDir, root) {
		return fmt.Sprintf("it would run in %s, outside the run's working directory %s, so allow rules do not apply", dir, root)
	}
	return ""
}

// resolved is p with its symbolic links resolved ("" when it cannot be).
func resolved(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// dir resolves where a call runs: its cwd (relative to the base) > the
// toolset's working_dir > --working-dir > the process's directory.
func (t *Tool) dir(cwd string) (string, error) {
	base, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot find the current directory: %v", err)
	}
	for _, d := range []string{t.opts.BaseDir, t.opts.WorkingDir, cwd} {
		if d == "" {
			continue
		}
		if filepath.IsAbs(d) {
			base = d
		} else {
			base = filepath.Join(base, d)
		}
	}
	base = filepath.Clean(base)
	fi, err := os.Stat(base)
	switch {
	case err != nil:
		return "", fmt.Errorf("working directory %s: %v", base, err)
	case !fi.IsDir():
		return "", fmt.Errorf("working directory %s is not a directory", base)
	}
	return base, nil
}

func errorResult(format string, args ...any) exec.Result {
	return exec.Result{IsError: true, Text: fmt.Sprintf(format, args...)}
}

// DialectOf is the dialect of the shell at path, its symbolic links
// resolved: dash is POSIX, bash is bash; any other shell, or one that
// cannot be found, is unknown (no line runs unasked).
func DialectOf(path string) permissions.Dialect {
	if !filepath.IsAbs(path) {
		p, err := sandbox.LookPath(path, "", os.Environ())
		if err != nil {
			return permissions.DialectUnknown
		}
		path = p
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return permissions.DialectUnknown
	}
	switch filepath.Base(real) {
	case "dash":
		return permissions.DialectPOSIX
	case "bash":
		return permissions.DialectBash
	}
	return permissions.DialectUnknown
}
