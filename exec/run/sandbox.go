package run

import (
	"io"
	"path/filepath"

	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/exec/session"
)

// startSandbox chooses what confines the run's children (DESIGN §12), if
// the run has not yet (makeSandbox), and records it in the journal.
func (r *Run) startSandbox() error {
	if r.sandbox != nil {
		return nil
	}
	if err := r.makeSandbox(); err != nil {
		return err
	}
	r.journal.Sandbox(string(r.sandbox.Mechanism()))
	return nil
}

// makeSandbox chooses what confines the run's children: permissions.sandbox,
// or off with --no-sandbox. It says once on stderr why the mechanism is not
// the best one. A mechanism asked for by name that cannot be had is a usage
// error.
func (r *Run) makeSandbox() error {
	mode, err := sandbox.ParseMode(r.cfg.Permissions.Sandbox)
	if err != nil {
		return &UsageError{err}
	}
	if r.opts.NoSandbox {
		mode = sandbox.Off
	}
	state := ""
	if dir, err := session.DefaultDir(r.getenv); err == nil {
		state = filepath.Dir(dir)
	}
	sb, err := sandbox.New(mode, state)
	if err != nil {
		return &UsageError{err}
	}
	if sb.Why != "" {
		r.notice("%s", sb.Why)
	}
	sb.Notify = func(msg string) { r.notice("%s", msg) }
	r.sandbox = sb
	return nil
}

// runSandbox is the run's sandbox once it has started (nil before).
func (r *Run) runSandbox() *sandbox.Sandbox { return r.sandbox }

// track keeps a model that holds a process (hitl-ext), closed with the run.
func (r *Run) track(c io.Closer) { r.models.add(func() { _ = c.Close() }) }
