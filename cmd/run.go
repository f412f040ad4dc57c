package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/exec/tools"
	"github.com/hitl-dev/hitl/prompt"
)

// runSpec is a run to start or continue: exec builds a new one, resume
// loads one from its session.
type runSpec struct {
	start   time.Time
	cfg     *config.Config
	agent   *config.Agent
	runID   string
	message string // the first user turn of the run
	state   *exec.State
	journal *session.Journal
	keep    bool // keep the session after success (--session named it)
	// loaded is the session a resumed run continues, nil for a new run.
	loaded *session.Loaded
}

// runAgent runs spec to its end and reports it.
func runAgent(ctx context.Context, opts *ExecOptions, spec *runSpec) (err error) {
	journalOpen := true
	defer func() {
		if !journalOpen {
			return
		}
		// The run never started: a new run leaves no session behind (it
		// would hold only its header, and block a rerun with --session).
		if spec.loaded == nil {
			_ = spec.journal.Remove()
		} else {
			spec.journal.Close()
		}
	}()
	if opts.MaxIterations < 0 {
		return usagef("--max-iterations must be at least 1")
	}
	if opts.WorkingDir != "" {
		if fi, err := os.Stat(opts.WorkingDir); err != nil || !fi.IsDir() {
			return usagef("--working-dir %s: not a directory", opts.WorkingDir)
		}
	}
	modelCfg, err := modelFor(spec.cfg, spec.agent, opts.Models)
	if err != nil {
		return err
	}
	cas, err := openCassette(&opts.ModelOptions)
	if err != nil {
		return err
	}
	if cas != nil {
		// Saved on every exit (it is also saved after each exchange).
		defer func() {
			if cerr := cas.Close(); cerr != nil {
				fmt.Fprintf(opts.IO.ErrOut, "hitl: %v\n", cerr)
				if err == nil {
					err = &reportedError{cerr}
				}
			}
		}()
	}
	now := time.Now()
	if cas != nil && !cas.Now().IsZero() {
		now = cas.Now() // the clock is frozen for add_date
	}
	var spin *spinner
	mopts := model.Options{Getenv: opts.IO.Getenv, Message: spec.message, Cassette: cas}
	if useSpinner(opts) {
		spin = &spinner{w: opts.IO.ErrOut}
		mopts.OnDelta = spin.Delta
	}
	m, err := model.New(modelCfg, mopts)
	if err != nil {
		return err
	}
	if stateful, ok := m.(session.Stateful); ok {
		spec.journal.Model = stateful
		if spec.loaded != nil && len(spec.loaded.ModelState) > 0 {
			if err := stateful.Restore(spec.loaded.ModelState); err != nil {
				return fmt.Errorf("session %s: model state: %w", spec.journal.Path(), err)
			}
		}
	}
	mode, err := promptMode(opts.IO, opts.Prompt, opts.JSON)
	if err != nil {
		return err
	}
	// A closed stdout ends the run as a signal would, not at its end.
	ctx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	sink, finish := newSinks(opts, mode, func() { cancelRun(&signalError{sig: sigPIPE}) })
	asker, closeFE, err := newAsker(opts.IO, &opts.PromptOptions, mode, sink, !opts.JSON && !opts.Quiet)
	if err != nil {
		return err
	}
	defer closeFE()
	asker.Observer = observers{asker.Observer, spec.journal}
	if spec.loaded != nil {
		pending := exec.PendingCalls(spec.state.Messages)
		asker.Sources = append([]prompt.Answerer{session.NewReplay(spec.loaded, pending)}, asker.Sources...)
		asker.SetNext(spec.loaded.NextPrompt(pending))
		reserveLostSecrets(asker.Secrets, spec.state.Messages)
	}
	var approvals []string
	if spec.loaded != nil {
		approvals = spec.loaded.Approvals
	}
	toolList, err := tools.Build(spec.cfg, spec.agent, tools.Deps{
		WorkingDir:  opts.WorkingDir,
		RunID:       spec.runID,
		Asker:       asker,
		Secrets:     asker.Secrets,
		Permissions: spec.cfg.Permissions,
		Yolo:        opts.Yolo,
		HiddenEnv:   model.KeyVars(spec.cfg),
		Approvals:   approvals,
		OnApproval:  spec.journal.Approval,
		Progress:    progressFunc(sink),
	})
	if err != nil {
		return err
	}
	defer tools.Close(toolList)
	sink.Emit(exec.Stamp(&exec.RunStarted{RunID: spec.runID, Agent: spec.agent.Name, Model: modelLabel(modelCfg), Session: spec.journal.Path()}, "run.started", time.Now()))

	maxIter := spec.agent.MaxIterations
	if opts.MaxIterations > 0 {
		maxIter = opts.MaxIterations
	}
	var runModel exec.Model = m
	if spin != nil {
		runModel = spinModel{Model: m, spin: spin}
	}
	runner := &exec.Runner{
		Model:           runModel,
		Tools:           toolList,
		System:          systemPrompt(spec.agent, now, opts.WorkingDir),
		MaxIterations:   maxIter,
		VerdictRequired: tools.VerdictRequired(spec.agent),
		Sink:            sink,
		Journal:         spec.journal,
	}
	if spec.loaded != nil {
		runner.Before = func(ctx context.Context) error {
			return reaskSecrets(ctx, opts, asker, spec.loaded, spec.state.Messages)
		}
	}
	outcome, runErr := runner.Run(ctx, spec.state)
	if runErr != nil && ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil {
			runErr = cause
		}
	}
	if runErr == nil && outcome.Status != exec.StatusSuccess {
		runErr = &outcomeError{outcome: outcome}
	}
	status := Status(runErr)
	spec.journal.End(status)
	journalOpen = false
	// run.finished names the session only while it exists to resume.
	kept := spec.journal.Path()
	if status == exec.StatusSuccess && !spec.keep {
		kept = ""
		if err := spec.journal.Remove(); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "hitl: could not delete the session: %v\n", err)
		}
	} else if err := spec.journal.Close(); err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "hitl: the session could not be saved: %v\n", err)
	}
	err = finish(runErr, outcome, spec.state, spec.start, kept)
	if err != nil && resumable(status) && !isReported(err) {
		// The error first, then how to go on.
		fmt.Fprintf(opts.IO.ErrOut, "hitl: %v\n", err)
		fmt.Fprintf(opts.IO.ErrOut, "hitl: to continue this run: hitl resume %s\n", spec.journal.Path())
		return &reportedError{err}
	}
	return err
}

// reserveLostSecrets keeps the placeholders of secrets answered before the
// run stopped from naming a secret asked after the resume: a command
// written for one must never get another.
func reserveLostSecrets(secrets *prompt.Secrets, msgs []exec.Message) {
	lost := 0
	for _, m := range msgs {
		if m.Role == exec.RoleTool {
			lost = max(lost, prompt.MaxPlaceholder(m.Text))
		}
	}
	secrets.Reserve(lost)
}

// reaskSecrets asks again, before a resumed run goes on, the secret
// questions answered before it stopped (a session never keeps their
// values), so $HITL_SECRET_<n> means in this run what it meant to the
// model. They are asked under ids s<n>. Only a secret whose placeholder
// is in its call's result is asked: the model never saw the others (the
// pending calls run again and ask anew; a call cut off by a second Ctrl-C
// after its answer left a record whose number may since name another
// secret).
func reaskSecrets(ctx context.Context, opts *ExecOptions, asker *prompt.Asker, loaded *session.Loaded, msgs []exec.Message) error {
	results := map[string]string{}
	for _, m := range msgs {
		if m.Role == exec.RoleTool {
			results[m.ToolCallID] = m.Text
		}
	}
	seen := map[int]bool{}
	for _, sq := range loaded.Secrets {
		if seen[sq.N] || !prompt.HasPlaceholder(results[sq.Question.CallID], sq.N) {
			continue
		}
		seen[sq.N] = true
		q := sq.Question
		q.ID, q.SecretSlot, q.Index, q.Count = fmt.Sprintf("s%d", sq.N), sq.N, 0, 1
		again := fmt.Sprintf("asked again after the resume: secret answers are never kept in a session (this is HITL_SECRET_%d)", sq.N)
		if q.Hint == "" {
			q.Hint = again
		} else {
			// the schema's description may be all that says which secret
			q.Hint += " (" + again + ")"
		}
		ans, err := asker.Ask(ctx, q)
		if err != nil {
			return err
		}
		if ans.Action != prompt.Accept {
			why := "the question was " + pastTense(ans.Action)
			if ans.Unanswered() {
				why = "nobody answered"
			}
			fmt.Fprintf(opts.IO.ErrOut, "hitl: HITL_SECRET_%d stays unset in this run (%s)\n", sq.N, why)
		}
	}
	return nil
}

// resumable says whether to tell the person how to resume.
func resumable(s exec.Status) bool {
	return s == exec.StatusInputRequired || s == exec.StatusInterrupted || s == exec.StatusError
}

// observers tells several observers of each question and answer.
type observers []prompt.Observer

func (o observers) Requested(q prompt.Question) {
	for _, x := range o {
		x.Requested(q)
	}
}

func (o observers) Answered(q prompt.Question, a prompt.Answer) {
	for _, x := range o {
		x.Answered(q, a)
	}
}

// createSession opens the journal of a new run: --session FILE, else a file
// named after the run id in the state directory.
func createSession(opts *ExecOptions, cfg *config.Config, agent *config.Agent, runID, message string) (*session.Journal, error) {
	path := opts.Session
	if path == "" {
		dir, err := session.DefaultDir(opts.IO.Getenv)
		if err != nil {
			return nil, err
		}
		path = filepath.Join(dir, runID+".jsonl")
	}
	return session.Create(path, session.Header{
		RunID:       runID,
		Created:     time.Now().UTC(),
		AgentFile:   relativeToWD(cfg.Path),
		AgentSHA256: cfg.SHA256,
		Agent:       agent.Name,
		Message:     message,
	})
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
