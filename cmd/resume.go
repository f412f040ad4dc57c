package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/spf13/cobra"
)

// ResumeOptions are the inputs of hitl resume: exec's flags, anew, plus the
// session and --force.
type ResumeOptions struct {
	ExecOptions
	SessionRef string
	Force      bool
}

// NewCmdResume continues a stopped run, or follows up a finished one.
func NewCmdResume(ios *IOStreams, runF func(context.Context, *ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{ExecOptions: ExecOptions{IO: ios}}
	c := &cobra.Command{
		Use:   "resume SESSION [MESSAGE...]",
		Short: "Continue a stopped run, or follow up a finished one",
		Long: `Continue the run kept in SESSION (a session file, or a run id in the state
directory). A pending question is asked again through the usual front ends
(or --answers), and the run goes on with the same conversation. With no
question pending, MESSAGE is a follow-up user turn.

The agent file is loaded again; if it changed since the run started, resume
refuses unless --force. Flags apply anew; counters and session approvals
carry over.`,
		Example: `  printf '"staging"\n' | hitl resume 20261122-101500-ab12cd34ef56
  hitl resume ./deploy.session.jsonl "now deploy to production too"`,
		Args: minArgs(1, "SESSION"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.SessionRef, opts.Message = args[0], args[1:]
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return resumeRun(c.Context(), opts)
		},
	}
	addRunFlags(c, &opts.ExecOptions, false)
	c.Flags().BoolVar(&opts.Force, "force", false, "resume even though the agent file changed")
	return c
}

func resumeRun(ctx context.Context, opts *ResumeOptions) error {
	start := time.Now()
	path, named, err := sessionPath(opts.IO, opts.SessionRef)
	if err != nil {
		return err
	}
	journal, loaded, err := session.Open(path)
	if err != nil {
		return &usageError{err}
	}
	spec, err := resumeSpec(opts, journal, loaded)
	if err != nil {
		journal.Close()
		return err
	}
	spec.start, spec.keep = start, named
	return runAgent(ctx, &opts.ExecOptions, spec)
}

func resumeSpec(opts *ResumeOptions, journal *session.Journal, loaded *session.Loaded) (*runSpec, error) {
	h := loaded.Header
	if _, err := os.Stat(h.AgentFile); err != nil && !filepath.IsAbs(h.AgentFile) {
		return nil, usagef("the session's agent file %s is not here: its path is relative to the directory the run started in; run hitl resume from there", h.AgentFile)
	}
	cfg, err := config.Load(h.AgentFile, opts.IO.LookupEnv)
	if err != nil {
		return nil, err
	}
	if cfg.SHA256 != h.AgentSHA256 && !opts.Force {
		return nil, usagef("%s changed since this run started (SHA-256 %.12s…, now %.12s…); resuming could widen what the run may do. Restore the file, or pass --force", h.AgentFile, h.AgentSHA256, cfg.SHA256)
	}
	agent := cfg.Agent(h.Agent)
	if agent == nil {
		return nil, usagef("%s has no agent %q any more", h.AgentFile, h.Agent)
	}
	st := &loaded.State
	// The journal keeps the first user turn in its header, not as a
	// message: put it back, or the model would get a conversation without
	// it (and a run stopped before its first model turn, none at all).
	if len(st.Messages) == 0 || st.Messages[0].Role != exec.RoleUser {
		st.Messages = append([]exec.Message{{Role: exec.RoleUser, Text: h.Message}}, st.Messages...)
	}
	pending := exec.PendingCalls(st.Messages)
	message := strings.Join(opts.Message, " ")
	last := st.Messages[len(st.Messages)-1]
	switch {
	case len(pending) > 0 && message != "":
		return nil, usagef("the run is waiting for an answer, not a message: answer on stdin or with --answers, then follow up once it finishes")
	case message != "":
		st.Messages = append(st.Messages, exec.Message{Role: exec.RoleUser, Text: message})
		if err := journal.Message(st.Messages[len(st.Messages)-1], st); err != nil {
			return nil, err
		}
	case len(pending) == 0 && last.Role == exec.RoleAssistant:
		return nil, usagef("the run has finished (%s); give a MESSAGE to follow up", statusOr(loaded.Status, "success"))
	}
	return &runSpec{
		cfg:     cfg,
		agent:   agent,
		runID:   h.RunID,
		message: h.Message,
		state:   st,
		journal: journal,
		loaded:  loaded,
	}, nil
}

func statusOr(s exec.Status, def string) string {
	if s == "" {
		return def
	}
	return string(s)
}

// sessionPath finds a session: an existing file (named: kept after
// success), else a run id in the state directory (deleted after success, as
// for a run that did not name its session).
func sessionPath(ios *IOStreams, ref string) (path string, named bool, err error) {
	if _, err := os.Stat(ref); err == nil {
		// The path hitl prints ("to continue this run: hitl resume PATH")
		// of a session it put in the state directory: not named by the
		// person, so deleted after success like a run id.
		return ref, !inDefaultDir(ios, ref), nil
	}
	if !strings.ContainsRune(ref, filepath.Separator) {
		dir, err := session.DefaultDir(ios.Getenv)
		if err != nil {
			return "", false, err
		}
		path := filepath.Join(dir, strings.TrimSuffix(ref, ".jsonl")+".jsonl")
		if _, err := os.Stat(path); err == nil {
			return path, false, nil
		}
	}
	return "", false, usagef("no session %q: give a session file or a run id from %s", ref, "hitl's state directory")
}

// inDefaultDir reports whether path is a file in the default session
// directory.
func inDefaultDir(ios *IOStreams, path string) bool {
	dir, err := session.DefaultDir(ios.Getenv)
	if err != nil {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	absDir, err := filepath.Abs(dir)
	return err == nil && filepath.Dir(abs) == absDir
}
