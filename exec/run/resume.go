package run

import (
	"os"
	"path/filepath"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/configcheck"
	"github.com/hitl-dev/hitl/exec/session"
)

// ResumeOptions are what hitl resume adds to a run's options.
type ResumeOptions struct {
	// Named: the session file was named by the person (kept after success).
	Named bool
	// Force accepts an agent file changed since the run started.
	Force bool
	// Message is a follow-up user turn ("" when none).
	Message string
	// LookupEnv resolves ${VAR} in the agent file.
	LookupEnv func(string) (string, bool)
}

// Resume continues the run kept in the session at path: it claims the
// session (a second resume of it fails), loads the agent file again
// (refusing one changed since, unless Force), and queues the follow-up
// message when no question is pending. opts.Model, when nil, is the
// agent's model; SelectModel, when set, picks it from the loaded config.
func Resume(path string, ro ResumeOptions, opts Options, selectModel func(*config.Config, *config.Agent) (*config.Model, error)) (*Run, error) {
	start := time.Now()
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	key, err := session.LoadKey(getenv)
	if err != nil {
		return nil, &UsageError{err}
	}
	journal, loaded, err := session.Open(path, key)
	if err != nil {
		return nil, &UsageError{err}
	}
	r, err := resume(journal, loaded, ro, opts, selectModel)
	if err != nil {
		journal.Close()
		return nil, err
	}
	r.start, r.keep = start, ro.Named
	return r, nil
}

func resume(journal *session.Journal, loaded *session.Loaded, ro ResumeOptions, opts Options, selectModel func(*config.Config, *config.Agent) (*config.Model, error)) (*Run, error) {
	h := loaded.Header
	if _, err := os.Stat(h.AgentFile); err != nil && !filepath.IsAbs(h.AgentFile) {
		if h.Dir != "" {
			return nil, usagef("the session's agent file %s is not here: its path is relative to the directory the run started in, %s; run hitl resume from there (cd %s)", h.AgentFile, h.Dir, h.Dir)
		}
		return nil, usagef("the session's agent file %s is not here: its path is relative to the directory the run started in; run hitl resume from there", h.AgentFile)
	}
	cfg, err := config.Load(h.AgentFile, ro.LookupEnv, configcheck.Checks())
	if err != nil {
		return nil, err
	}
	if cfg.SHA256 != h.AgentSHA256 && !ro.Force {
		return nil, usagef("%s changed since this run started (SHA-256 %.12s…, now %.12s…); resuming could widen what the run may do. Restore the file, or pass --force", h.AgentFile, h.AgentSHA256, cfg.SHA256)
	}
	agent := cfg.Agent(h.Agent)
	if agent == nil {
		return nil, usagef("%s has no agent %q any more", h.AgentFile, h.Agent)
	}
	if selectModel != nil {
		if opts.Model, err = selectModel(cfg, agent); err != nil {
			return nil, err
		}
	}
	st := &loaded.State
	// The journal keeps the first user turn in its header, not as a
	// message: put it back, or the model would get a conversation without
	// it (and a run stopped before its first model turn, none at all).
	if len(st.Messages) == 0 || st.Messages[0].Role != exec.RoleUser {
		st.Messages = append([]exec.Message{{Role: exec.RoleUser, Text: h.Message}}, st.Messages...)
		// Its command's tool calls had not all run: they run now.
		opts.Command = h.Command
	}
	pending := exec.PendingCalls(st.Messages)
	last := st.Messages[len(st.Messages)-1]
	switch {
	case len(pending) > 0 && ro.Message != "":
		return nil, usagef("the run is waiting for an answer, not a message: answer on stdin or with --answers, then follow up once it finishes")
	case ro.Message != "":
		st.Messages = append(st.Messages, exec.Message{Role: exec.RoleUser, Text: ro.Message})
		if err := journal.Message(st.Messages[len(st.Messages)-1], st); err != nil {
			return nil, err
		}
	case len(pending) == 0 && last.Role == exec.RoleAssistant:
		status := string(loaded.Status)
		if status == "" {
			status = "success"
		}
		return nil, usagef("the run has finished (%s); give a MESSAGE to follow up", status)
	}
	return &Run{
		opts:    opts,
		cfg:     cfg,
		agent:   agent,
		runID:   h.RunID,
		message: h.Message,
		state:   st,
		journal: journal,
		loaded:  loaded,
	}, nil
}
