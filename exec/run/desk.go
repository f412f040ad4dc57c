package run

import (
	"context"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/receipt"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/prompt"
)

// deskAgent is the agent a desk's journal names: no agent file is run.
const deskAgent = "hitl mcp"

// Desk is hitl's question machinery offered to an agent hitl does not run
// (hitl mcp, DESIGN §16): the answers file, the approvers, the front end,
// the time limit and the policy, events, one session journal with its
// receipts, as a run has them, but no model and no conversation. Each
// call asks through an Asker of its own (Turn), one call at a time, so a
// bad answer or an interrupt ends that call only.
type Desk struct {
	r        *Run
	receipts *receipt.Writer
	turn     chan struct{} // holds one token while a call asks
	next     int           // the next question number (held with turn)
}

// NewDesk opens the desk: its journal (opts.Session, else a file in the
// state dir deleted by Close) and the sandbox its approver programs run
// in. opts.Unanswered is what the calls' Askers do with a question nobody
// answers.
func NewDesk(opts Options) (*Desk, error) {
	r := &Run{
		opts:  opts,
		start: time.Now(),
		cfg:   &config.Config{},
		runID: newRunID(),
		keep:  opts.Session != "",
		state: &exec.State{},
	}
	path, key, err := journalPlace(r.getenv, opts.Session, r.runID)
	if err != nil {
		return nil, err
	}
	j, err := session.Create(path, session.Header{
		RunID: r.runID, Created: time.Now().UTC(), Agent: deskAgent, Dir: startDir(),
	}, key)
	if err != nil {
		return nil, err
	}
	r.journal = j
	if err := r.startSandbox(); err != nil {
		r.Close()
		return nil, err
	}
	if opts.Answers != nil {
		opts.Answers.Bind(r.cwd(), func(msg string) { r.notice("%s", msg) })
	}
	return &Desk{r: r, receipts: r.receipts(), turn: make(chan struct{}, 1)}, nil
}

// Session is the journal's path.
func (d *Desk) Session() string { return d.r.journal.Path() }

// Dir is the directory the desk runs in (--working-dir, else the current
// one): what an answers-file entry for a command binds.
func (d *Desk) Dir() string { return d.r.cwd() }

// Turn waits until no other call asks (or ctx ends), then returns the
// Asker of one call: its questions and answers become events, journal
// records and receipts, its approvers are stopped when ctx ends. done
// ends the call's turn; it must be called once.
func (d *Desk) Turn(ctx context.Context) (a *prompt.Asker, done func(), err error) {
	select {
	case d.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, context.Cause(ctx)
	}
	r := d.r
	a = &prompt.Asker{
		FrontEnd:   r.opts.FrontEnd,
		NoFrontEnd: r.opts.NoFrontEnd,
		Timeout:    r.opts.Timeout,
		Unanswered: r.opts.Unanswered,
		Observer:   observers{&promptEvents{sink: r.opts.Sink}, r.journal, d.receipts},
		OnBadAnswer: func(b *prompt.BadAnswerError) {
			r.emit(&exec.ErrorEvent{Message: b.Error(), Line: b.Line, PromptID: b.PromptID}, "error")
			r.notice("%v", b)
		},
	}
	a.SetNext(d.next)
	if r.opts.Answers != nil {
		a.Sources = append(a.Sources, r.opts.Answers)
	}
	a.Sources = append(a.Sources, r.approvers(ctx)...)
	return a, func() {
		d.next = a.Next()
		if r.keep {
			r.journal.Flush() // the audit record holds each call at once
		}
		<-d.turn
	}, nil
}

// Close ends the desk: the journal is closed, or deleted when no
// --session named it.
func (d *Desk) Close() error {
	j := d.r.journal
	if j == nil {
		return nil
	}
	d.r.journal = nil
	j.End(exec.StatusSuccess)
	if !d.r.keep {
		return j.Remove()
	}
	return j.Close()
}
