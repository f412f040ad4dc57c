// Package run holds one run of an agent from start to end: New (hitl exec)
// or Resume (a session) gives a *Run, and Do runs it. It owns the order in
// which a question's answer is looked for (session replay, answers file,
// front end, the unanswered policy), every prompt.* and run.* event, the
// session journal, the run's secrets, the first message and system prompt,
// and the tools. The command line (cmd) gives it flags already checked, the
// front end and an event sink, and maps what Do returns to an exit code.
package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/hooks"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/exec/model/cassette"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/exec/tools"
	"github.com/hitl-dev/hitl/exec/tools/skills"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/approver"
	"golang.org/x/crypto/ssh"
)

// Prompting is how questions are answered besides a resumed session: the
// answers file, the front end, the time limit and the unanswered policy.
type Prompting struct {
	Answers    *prompt.AnswersFile // --answers; nil when not given
	FrontEnd   prompt.FrontEnd     // nil: --prompt none
	Timeout    time.Duration
	Unanswered prompt.Unanswered
	// NoFrontEnd says why FrontEnd is nil when the person did not choose
	// --prompt none ("" for them).
	NoFrontEnd string
	// Approvers are asked after the answers file, before the front end
	// (--approver); ApproverTimeout bounds each one's answer.
	Approvers       []Approver
	ApproverTimeout time.Duration
	// SignKey signs each receipt (--sign-key; nil: unsigned).
	SignKey ssh.Signer
}

// Options are what a run takes from the command line, checked.
type Options struct {
	// Command is the command the first message runs, cut at its tool
	// calls (CommandCalls): they run, as the agent's calls, before the
	// first model turn, and their results make the message.
	Command []config.Segment
	Prompting
	// Model is the model to use (the agent's, or --model's).
	Model *config.Model
	// Cassette, when set, records or replays the model's exchanges; its
	// frozen clock is the date add_date shows.
	Cassette   *cassette.Cassette
	WorkingDir string
	Yolo       bool
	// NoSandbox is --no-sandbox: children run without a sandbox, and
	// allow rules still apply (the operator's explicit opt-out).
	NoSandbox     bool
	MaxIterations int // 0: the agent's, else 50
	// Session is the journal's path for a new run ("": a file named after
	// the run id in the state dir, deleted after success).
	Session string

	// Sink receives every event of the run.
	Sink exec.Sink
	// Progress shows tools' progress to a person (nil: nothing).
	Progress func(string)
	// OnDelta is called as each streamed model chunk arrives.
	OnDelta func()
	// WrapModel, when set, wraps the model (a spinner while it thinks).
	WrapModel func(exec.Model) exec.Model
	// Notices receives what a person must know that is not an event (a
	// secret left unset after a resume).
	Notices io.Writer
	// Getenv reads the environment (keys, the state dir); nil: os.Getenv.
	Getenv func(string) string
	// ExitCode maps the error ending the run to its exit code, for
	// run.finished and the session's end record.
	ExitCode func(error) int
}

// Run is one run: a new one or one resumed from its session.
type Run struct {
	opts Options
	// models are the models holding a process (hitl-ext), closed with
	// the run.
	models  closers
	start   time.Time
	cfg     *config.Config
	agent   *config.Agent
	runID   string
	message string // the first user turn of the run
	state   *exec.State
	journal *session.Journal
	keep    bool // keep the session after success
	// loaded is the session a resumed run continues, nil for a new run.
	loaded *session.Loaded
	// sandbox starts every child of the run (startSandbox).
	sandbox *sandbox.Sandbox
	// team is what the run's agents share (Do sets it up).
	team *members
	// hooks are the agents' hooks (hookRun), nil before or without any.
	hooks *hooks.Run
	// notifying counts the on_user_input hooks running.
	notifying sync.WaitGroup
	// rag are the rag entries' indexes.
	rag ragIndexes
	// startContext is what session_start hooks added: the starting
	// agent's system prompt gets it.
	startContext string
	// skills are the skills found for the run's agents with skills:,
	// looked for once (skillSet): the run keeps them to its end.
	skillsOnce sync.Once
	skills     *skills.Set
}

// Result is how a run ended, for the command line to report.
type Result struct {
	Outcome exec.Outcome
	// Session is the journal's path; Kept says whether it still exists
	// (it is deleted after a success unless named).
	Session string
	Kept    bool
}

// New starts a run of agent with message as its first user turn (see
// FirstMessage), and creates its session journal.
func New(cfg *config.Config, agent *config.Agent, message string, opts Options) (*Run, error) {
	r := &Run{
		opts:    opts,
		start:   time.Now(),
		cfg:     cfg,
		agent:   agent,
		runID:   newRunID(),
		message: message,
		keep:    opts.Session != "",
		state:   &exec.State{Messages: []exec.Message{{Role: exec.RoleUser, Text: message}}},
	}
	// The sandbox first, and the one the agent's lines run in unasked
	// started in the background: it is ready by the first line, which a
	// model may send as soon as it is asked.
	if err := r.makeSandbox(); err != nil {
		return nil, err
	}
	tools.PrepareSandbox(cfg, agent, tools.Deps{WorkingDir: opts.WorkingDir, Permissions: cfg.Permissions, Sandbox: r.sandbox})
	path, key, err := journalPlace(r.getenv, opts.Session, r.runID)
	if err != nil {
		r.sandbox.Close()
		return nil, err
	}
	j, err := session.Create(path, session.Header{
		RunID:       r.runID,
		Created:     time.Now().UTC(),
		AgentFile:   relativeToWD(cfg.Path),
		AgentSHA256: cfg.SHA256,
		Agent:       agent.Name,
		Message:     message,
		Command:     opts.Command,
		Dir:         startDir(),
	}, key)
	if err != nil {
		r.sandbox.Close()
		return nil, err
	}
	r.journal = j
	r.journal.Sandbox(string(r.sandbox.Mechanism()))
	return r, nil
}

func (r *Run) getenv(k string) string {
	if r.opts.Getenv == nil {
		return os.Getenv(k)
	}
	return r.opts.Getenv(k)
}

// Close releases a run that will not Do: a new run leaves no session
// behind (it would hold only its header, and block a rerun with
// --session); a resumed one keeps its session as it was.
func (r *Run) Close() {
	// The run's sandboxes end with it: nothing they started is left.
	r.models.closeAll()
	r.sandbox.Close()
	if r.journal == nil {
		return
	}
	if r.loaded == nil {
		_ = r.journal.Remove()
	} else {
		r.journal.Close()
	}
	r.journal = nil
}

// Do runs to the end. The error is what ended the run (nil on success; an
// *OutcomeError for a run that finished rejected or cancelled, a
// *prompt.StopError for one that waits for input); run.finished has been
// emitted and the journal closed (or deleted) either way.
func (r *Run) Do(ctx context.Context) (res Result, err error) {
	defer r.Close() // when the run never started
	unregister := onHardExit(ctx, r.journal.Flush)
	defer unregister()
	active := r.activeAgent()
	m, stateful, err := r.modelFor(active, "", r.message)
	if err != nil {
		return res, err
	}
	r.journal.Model = stateful
	if err := r.startSandbox(); err != nil {
		return res, err
	}

	// A background agent's question nobody answered stops the whole run:
	// it cancels ctx with that error as the cause.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	asker := r.asker(ctx)
	r.team = &members{asker: asker, shared: r.shared(), stop: stop, ctx: ctx}
	defer r.team.closeAll()
	r.emit(&exec.RunStarted{RunID: r.runID, Agent: r.agent.Name, Model: modelLabel(r.opts.Model), Session: r.journal.Path(), Sandbox: string(r.sandbox.Mechanism())}, "run.started")
	source := "startup"
	if r.loaded != nil {
		source = "resume"
	}
	for _, a := range r.cfg.Agents {
		if a.Skills {
			r.skillSet() // at the start: every agent of the run sees these
			break
		}
	}
	r.startContext = r.plainHooks(ctx, active, config.HookSessionStart, hooks.Input{Source: source})
	defer func() {
		// After a signal the session_end hooks get a short grace, not
		// their whole timeout: a runner's SIGTERM is followed by SIGKILL.
		endCtx := context.WithoutCancel(ctx)
		if ctx.Err() != nil {
			var cancel context.CancelFunc
			endCtx, cancel = context.WithTimeout(endCtx, 2*time.Second)
			defer cancel()
		}
		r.plainHooks(endCtx, active, config.HookSessionEnd, hooks.Input{Reason: string(Status(r.exitCode(err), err))})
	}()
	mem, closeTools, err := r.member(ctx, active, m, stateful, []string{active.Name})
	if err == nil {
		r.team.onClose(closeTools)
	}
	if err != nil {
		// A tool that cannot start (an MCP server): the run ends before
		// it began, with status error; a resumed run keeps its session.
		// One stopped by a signal while its tools started was
		// interrupted, whatever the tool made of that (an error that
		// says so, with where, stays).
		if cause := context.Cause(ctx); !errors.Is(err, cause) {
			err = r.stoppedBy(ctx, err)
		}
		res = Result{Session: r.journal.Path(), Kept: r.loaded != nil}
		code := r.exitCode(err)
		r.finished(err, code, Status(code, err), exec.Outcome{}, res)
		return res, err
	}

	runner := &exec.Runner{
		Sink:      r.opts.Sink,
		Journal:   r.journal,
		OnHandoff: r.handoff("", []string{active.Name}, func(s session.Stateful) { r.journal.Model = s }),
	}
	if active != r.agent {
		mem.IDPrefix = idPrefix("", active.Name)
	}
	runner.Use(mem)
	if r.opts.MaxIterations > 0 {
		runner.MaxIterations = r.opts.MaxIterations
	}
	if r.loaded != nil {
		runner.Before = func(ctx context.Context) error {
			_, results := toolResults(r.state.Messages)
			return asker.Secrets.Reask(ctx, asker, r.loaded.Secrets, results, r.opts.Notices)
		}
	}
	var outcome exec.Outcome
	runErr := r.runCommand(ctx, runner)
	if runErr == nil {
		outcome, runErr = runner.Run(ctx, r.state)
	}
	r.team.closeAll()  // background agents end with the run
	r.notifying.Wait() // on_user_input hooks (each bounded by its timeout)
	runErr = r.stoppedBy(ctx, runErr)
	if runErr == nil && outcome.Status != exec.StatusSuccess {
		runErr = &OutcomeError{Outcome: outcome}
	}
	code := r.exitCode(runErr)
	status := Status(code, runErr)
	r.journal.End(status)
	res = Result{Outcome: outcome, Session: r.journal.Path(), Kept: true}
	if status == exec.StatusSuccess && !r.keep {
		res.Kept = false
		if err := r.journal.Remove(); err != nil {
			r.notice("could not delete the session: %v", err)
		}
	} else if err := r.journal.Close(); err != nil {
		r.notice("the session could not be saved: %v", err)
	}
	r.journal = nil
	r.finished(runErr, code, status, outcome, res)
	return res, runErr
}

// stoppedBy is err, or what cancelled the run (a signal) when it was
// cancelled.
func (r *Run) stoppedBy(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
	}
	return err
}

func (r *Run) exitCode(err error) int {
	if r.opts.ExitCode == nil {
		if err == nil {
			return 0
		}
		return 1
	}
	return r.opts.ExitCode(err)
}

func (r *Run) notice(format string, args ...any) {
	if r.opts.Notices != nil {
		fmt.Fprintf(r.opts.Notices, "hitl: "+format+"\n", args...)
	}
}

// now is the date add_date shows: the cassette's frozen clock when it has
// one.
func (r *Run) now() time.Time {
	if c := r.opts.Cassette; c != nil && !c.Now().IsZero() {
		return c.Now()
	}
	return time.Now()
}

// asker is the run's question machinery, with answers looked for in this
// order: the session being resumed (never for approvals), the answers
// file, the front end, then the unanswered policy. Every question and
// answer becomes an event and a journal record.
func (r *Run) asker(ctx context.Context) *prompt.Asker {
	a := &prompt.Asker{
		FrontEnd:   r.opts.FrontEnd,
		NoFrontEnd: r.opts.NoFrontEnd,
		Timeout:    r.opts.Timeout,
		Unanswered: r.opts.Unanswered,
		Observer:   observers{&promptEvents{sink: r.opts.Sink}, r.journal, r.receipts()},
		Secrets:    &prompt.Secrets{},
		OnBadAnswer: func(b *prompt.BadAnswerError) {
			r.emit(&exec.ErrorEvent{Message: b.Error(), Line: b.Line, PromptID: b.PromptID}, "error")
		},
		OnRefused: func(q prompt.Question, src prompt.Source, err error) {
			msg := fmt.Sprintf("an answer to question %s from %s answers nothing: %v", q.ID, src, err)
			r.emit(&exec.ErrorEvent{Message: msg, PromptID: q.ID}, "error")
			r.notice("%s", msg)
		},
	}
	if r.loaded != nil {
		// The pending calls of every conversation: the run's, and those
		// of the agents it stopped inside (DESIGN §13).
		pending := r.loaded.Pending(r.state.Messages)
		a.Sources = append(a.Sources, session.NewReplay(r.loaded, pending))
		a.SetNext(r.loaded.NextPrompt(pending))
		texts, _ := toolResults(r.state.Messages)
		a.Secrets.ReserveSeen(texts)
	}
	if r.opts.Answers != nil {
		r.opts.Answers.Bind(r.opts.WorkingDir, func(msg string) { r.notice("%s", msg) })
		a.Sources = append(a.Sources, r.opts.Answers)
	}
	a.Sources = append(a.Sources, r.hookSources()...)
	a.Sources = append(a.Sources, r.approvers(ctx)...)
	if h := r.hookRun(); h != nil {
		h.Ctx = ctx
		a.BeforeWait = func(q prompt.Question) {
			// A notification: the question is not held up while it runs.
			if ag := r.cfg.Agent(q.Agent); ag != nil {
				r.notifying.Add(1)
				go func() {
					defer r.notifying.Done()
					r.plainHooks(ctx, ag, config.HookOnUserInput, hooks.Input{})
				}()
			}
		}
	}
	return a
}

// toolsOf starts agent a's MCP servers and builds its tools, and its
// deferred ones (nil: none). closeTools stops what they hold (the servers'
// process groups, the remote callback server); a hard exit kills the
// servers.
func (r *Run) toolsOf(ctx context.Context, a *config.Agent, deps tools.Deps) (list []exec.Tool, deferral *exec.Deferral, closeTools func(), err error) {
	servers, err := tools.StartMCP(ctx, r.cfg, a, deps)
	if err != nil {
		return nil, nil, nil, err
	}
	unregister := onHardExit(ctx, servers.Kill)
	stopServers := func() {
		unregister()
		if err := servers.Close(); err != nil {
			r.notice("%v", err)
		}
	}
	deps.MCP = servers
	list, deferral, err = tools.Build(r.cfg, a, deps)
	if err != nil {
		stopServers()
		return nil, nil, nil, err
	}
	all := append(slices.Clone(list), deferral.Deferred()...)
	for _, w := range tools.RuleWarnings(r.cfg, a, all) {
		r.notice("warning: %s", w)
	}
	return list, deferral, func() {
		tools.Close(all)
		stopServers()
	}, nil
}

// shared are the approvals every agent of the run shares: those given
// before a resume, and those given from now on (journaled).
func (r *Run) shared() *tools.Shared {
	approvals, toolApprovals := r.priorApprovals()
	return tools.NewShared(approvals, toolApprovals, r.journal.ToolApproval)
}

// priorApprovals are the approvals for the session a resumed run carries
// over.
func (r *Run) priorApprovals() (approvals, toolApprovals []string) {
	if r.loaded == nil {
		return nil, nil
	}
	// An MCP tool's "for this session" approval lasts until the run
	// stops: its servers start anew, so it is asked again (DESIGN §10);
	// other tools' (fetch origins) carry over like shell's.
	for _, k := range r.loaded.ToolApprovals {
		if !strings.HasPrefix(k, "mcp:") {
			toolApprovals = append(toolApprovals, k)
		}
	}
	return r.loaded.Approvals, toolApprovals
}

// skillSet is the skills of the run: found once, when the run starts (Do),
// in the home directory and the working directory's project (a resumed
// run looks again).
func (r *Run) skillSet() *skills.Set {
	r.skillsOnce.Do(func() {
		cwd := r.opts.WorkingDir
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		home, _ := os.UserHomeDir()
		r.skills = skills.Discover(home, cwd)
	})
	return r.skills
}

// toolDeps is what the agent's toolsets need from the run.
func (r *Run) toolDeps(asker *prompt.Asker, chain []string) tools.Deps {
	approvals, toolApprovals := r.priorApprovals()
	var resumed []exec.Message
	var callStates map[string]json.RawMessage
	if r.loaded != nil {
		resumed = r.state.Messages
		callStates = r.loaded.CallStates
	}
	// Commands never see the model keys, nor the key that authenticates
	// sessions (with it, a command could forge a session's approvals).
	hidden := r.hiddenEnv()
	return tools.Deps{
		WorkingDir:     r.opts.WorkingDir,
		RunID:          r.runID,
		Asker:          asker,
		Secrets:        asker.Secrets,
		Permissions:    r.cfg.Permissions,
		Yolo:           r.opts.Yolo,
		Sandbox:        r.sandbox,
		HiddenEnv:      hidden,
		Approvals:      approvals,
		OnApproval:     r.journal.Approval,
		ToolApprovals:  toolApprovals,
		OnToolApproval: r.journal.ToolApproval,
		Progress:       r.opts.Progress,
		Resumed:        resumed,
		CallStates:     callStates,
		OnCallState:    r.journal.CallState,
		Notice:         func(msg string) { r.notice("%s", msg) },
		Getenv:         r.getenv,
		RAG:            r.ragTool,
		Ctx:            r.team.ctx,
		Shared:         r.team.shared,
		Team: &tools.Team{
			Starter: starter{r}, Chain: chain, Ctx: r.team.ctx, Record: r.recordTask,
			Fail: func(err error) { r.team.stop(err) }, Tasks: r.tasks(),
		},
	}
}

// hiddenEnv are the variables no child of the run inherits: the model keys
// and the key that authenticates sessions (with it, a command could forge
// a session's approvals).
func (r *Run) hiddenEnv() []string {
	hidden := append(model.KeyVars(r.cfg), session.KeyEnv)
	if m := r.opts.Model; m != nil && m.TokenKey != "" {
		hidden = append(hidden, m.TokenKey) // a --model override's key variable
	}
	return hidden
}

func (r *Run) emit(e exec.Event, typ string) {
	if r.opts.Sink != nil {
		r.opts.Sink.Emit(exec.Stamp(e, typ, time.Now()))
	}
}

// finished emits run.finished.
func (r *Run) finished(runErr error, code int, status exec.Status, out exec.Outcome, res Result) {
	fin := &exec.RunFinished{
		Status:     status,
		ExitCode:   code,
		Text:       out.Text,
		Output:     out.Output,
		Iterations: r.state.Iterations,
		Usage:      r.state.Usage,
		DurationMS: time.Since(r.start).Milliseconds(),
	}
	if res.Kept {
		fin.Session = res.Session // only while it exists to resume
	}
	if runErr != nil {
		var o *OutcomeError
		if errors.As(runErr, &o) {
			fin.Text = o.Outcome.Text
		} else {
			fin.Error = runErr.Error()
		}
		var stop *prompt.StopError
		if errors.As(runErr, &stop) {
			fin.PendingPromptID = stop.Question.ID
			fin.Interrupts = []approver.Interrupt{approver.InterruptOf(stop.Question)}
		}
	}
	r.emit(fin, "run.finished")
}

func modelLabel(m *config.Model) string {
	if m.Model == "" {
		return m.Provider + "/" + m.Name
	}
	return m.Provider + "/" + m.Model
}

// startDir is the directory the run starts in ("" when unknown).
func startDir() string {
	wd, _ := os.Getwd()
	return wd
}

func relativeToWD(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(wd, abs); err == nil {
		return rel
	}
	return abs
}

// journalPlace is where a run's journal goes (the --session file, else the
// state dir's sessions) and the key that seals it; a missing key is a
// usage error.
func journalPlace(getenv func(string) string, named, runID string) (path string, key session.Key, err error) {
	path = named
	if path == "" {
		dir, err := session.DefaultDir(getenv)
		if err != nil {
			return "", session.Key{}, err
		}
		path = filepath.Join(dir, runID+".jsonl")
	}
	key, err = session.LoadKey(getenv)
	if err != nil {
		return "", session.Key{}, &UsageError{err}
	}
	return path, key, nil
}
