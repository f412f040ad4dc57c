package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/run"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
		Use:   "resume [flags] SESSION [MESSAGE...]",
		Short: "Continue a stopped run, or follow up a finished one",
		Long: `Continue the run kept in SESSION (a session file, or a run id in the state
directory). A pending question is asked again through the usual front ends
(or --answers), and the run goes on with the same conversation. With no
question pending, MESSAGE is a follow-up user turn.

The agent file is loaded again; if it changed since the run started, resume
refuses unless --force. Flags apply anew; counters and session approvals
carry over. Flags go before SESSION or right after it, as for hitl exec.

Exit status as for hitl exec.`,
		Example: `  printf '"staging"\n' | hitl resume 20261122-101500-ab12cd34ef56
  hitl resume ./deploy.session.jsonl "now deploy to production too"`,
		Args: minArgs(1, "SESSION"),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if opts.SessionRef, opts.Message, err = splitMessage(c, args); err != nil {
				if errors.Is(err, pflag.ErrHelp) {
					return c.Help()
				}
				return err
			}
			opts.maxIterationsSet = c.Flags().Changed("max-iterations")
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return resumeRun(c.Context(), opts)
		},
	}
	addRunFlags(c, &opts.ExecOptions, false)
	messageArgs(c)
	c.Flags().BoolVar(&opts.Force, "force", false, "resume even though the agent file changed")
	completeValues(c)
	c.ValidArgsFunction = completeSessions(opts.IO)
	return c
}

func resumeRun(ctx context.Context, opts *ResumeOptions) error {
	if err := checkRunFlags(&opts.ExecOptions); err != nil {
		return err
	}
	path, named, err := sessionPath(opts.IO, opts.SessionRef)
	if err != nil {
		return err
	}
	ro := run.ResumeOptions{Named: named, Force: opts.Force, Message: strings.Join(opts.Message, " "), LookupEnv: opts.IO.LookupEnv}
	opts.PromptOptions.resuming = true
	return runAgent(ctx, &opts.ExecOptions, func(o run.Options) (*run.Run, error) {
		return run.Resume(path, ro, o, func(cfg *config.Config, agent *config.Agent) (*config.Model, error) {
			return modelFor(cfg, agent, opts.Models)
		})
	})
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
