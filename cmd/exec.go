package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/configcheck"
	"github.com/hitl-dev/hitl/exec/run"
	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ExecOptions are the inputs of hitl exec.
type ExecOptions struct {
	IO *IOStreams

	AgentFile     string
	Message       []string
	AgentName     string
	MessageFile   string
	JSON          bool
	Quiet         bool
	MaxIterations int
	WorkingDir    string
	Yolo          bool
	NoSandbox     bool
	Session       string
	// maxIterationsSet: --max-iterations was given (0 is then an error,
	// not "the default").
	maxIterationsSet bool
	PromptOptions
	ModelOptions
	ApproveOptions
}

// NewCmdExec runs an agent headless.
func NewCmdExec(ios *IOStreams, runF func(context.Context, *ExecOptions) error) *cobra.Command {
	opts := &ExecOptions{IO: ios}
	c := &cobra.Command{
		Use:   "exec [flags] AGENT.yaml [MESSAGE...]",
		Short: "Run an agent headless; MESSAGE is the first user turn",
		Long: `Run the agent defined in AGENT.yaml. MESSAGE (its words joined by a space)
is the first user turn; /NAME runs the agent's named command NAME. With no
message the first turn is "` + exec.DefaultMessage + `"

Flags go before AGENT.yaml or right after it: from the first MESSAGE word on,
every word is message text ("fix the --yolo handling" never turns on --yolo);
-- ends the flags for a message that starts with a dash.

The final answer goes to stdout; progress goes to stderr. With --json, stdout
is one JSON event per line instead. Questions go to the terminal, else are
answered by JSON lines on stdin (see hitl help answers).

Exit status: 0 success, 1 runtime error, 2 usage, config or bad answer line,
3 rejected or cancelled, 4 input required (continue with hitl resume),
129/130/143 hung up, interrupted or terminated, 141 stdout closed (broken
pipe).`,
		Example: `  hitl exec agents/hello.yaml "hi"
  hitl exec --json agents/hello.yaml | jq -c .`,
		Args: minArgs(1, "AGENT.yaml"),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if opts.AgentFile, opts.Message, err = splitMessage(c, args); err != nil {
				if errors.Is(err, pflag.ErrHelp) {
					return c.Help()
				}
				return err
			}
			opts.maxIterationsSet = c.Flags().Changed("max-iterations")
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return execRun(c.Context(), opts)
		},
	}
	addRunFlags(c, opts, true)
	messageArgs(c)
	completeValues(c)
	return c
}

// addRunFlags adds the flags exec and resume share; exec alone names the
// agent and the first message.
func addRunFlags(c *cobra.Command, opts *ExecOptions, isExec bool) {
	f := c.Flags()
	if isExec {
		f.StringVarP(&opts.AgentName, "agent", "a", "", "agent to run (default root, else the first agent in the file)")
		f.StringVar(&opts.MessageFile, "message-file", "", "read the first user turn from `FILE`")
		f.StringVar(&opts.Session, "session", "", "keep the session journal in `FILE` (default under the XDG state dir; kept after success when named)")
	}
	f.BoolVar(&opts.JSON, "json", false, "write JSONL events to stdout")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress on stderr")
	f.IntVar(&opts.MaxIterations, "max-iterations", 0, "`N` model turns before the run stops with an error (default from the agent file, else 50)")
	f.StringVar(&opts.WorkingDir, "working-dir", "", "`DIR` where shell commands run (default the current directory)")
	f.BoolVar(&opts.Yolo, "yolo", false, "approve every shell command without asking (deny and ask rules still apply)")
	f.BoolVar(&opts.NoSandbox, "no-sandbox", false, "start commands and servers without a sandbox, allow rules still applying (docs/security.md)")
	opts.PromptOptions.addFlags(f, true)
	opts.ModelOptions.addFlags(f)
	opts.ApproveOptions.addFlags(f)
}

func execRun(ctx context.Context, opts *ExecOptions) error {
	if err := checkRunFlags(opts); err != nil {
		return err
	}
	msg, err := messageText(opts)
	if err != nil {
		return err
	}
	cfg, err := config.Load(opts.AgentFile, opts.IO.LookupEnv, configcheck.Checks())
	if err != nil {
		return err
	}
	agent, err := pickAgent(cfg, opts.AgentName)
	if err != nil {
		return err
	}
	message, err := run.FirstMessage(agent, msg)
	if err != nil {
		return err
	}
	modelCfg, err := modelFor(cfg, agent, opts.Models)
	if err != nil {
		return err
	}
	command := run.CommandCalls(agent, msg)
	return runAgent(ctx, opts, func(ro run.Options) (*run.Run, error) {
		ro.Model, ro.Session, ro.Command = modelCfg, opts.Session, command
		return run.New(cfg, agent, message, ro)
	})
}

// newSinks returns the event sink for the run, and the function that reports
// the end of the run (run.finished is the run's) and returns the command's
// error. broken is called once when stdout is closed, to end the run as a
// signal would (DESIGN §6).
func newSinks(opts *ExecOptions, mode string, broken func()) (exec.Sink, func(error, exec.Outcome) error) {
	ios := opts.IO
	if opts.JSON {
		js := &jsonSink{w: ios.Out, onBroken: broken}
		return js, func(runErr error, _ exec.Outcome) error {
			if runErr == nil && js.broken() {
				return &signalError{sig: sigPIPE}
			}
			reportOutcome(ios, runErr)
			return runErr
		}
	}
	hs := &humanSink{out: ios.Out, err: ios.ErrOut, quiet: opts.Quiet, outIsTTY: ios.IsStdoutTTY(), showQuestions: mode != "tty"}
	return hs, func(runErr error, out exec.Outcome) error {
		if runErr == nil && hs.outErr != nil {
			return &signalError{sig: sigPIPE}
		}
		reportOutcome(ios, runErr)
		if runErr == nil && out.Text != "" && !hs.finalText {
			fmt.Fprintf(ios.ErrOut, "hitl: approved: %s\n", termtext.Text(out.Text))
		}
		return runErr
	}
}

// reportOutcome tells the person why a run did not succeed; errors are
// printed by Main.
func reportOutcome(ios *IOStreams, runErr error) {
	var o *run.OutcomeError
	if errors.As(runErr, &o) {
		fmt.Fprintf(ios.ErrOut, "hitl: %s: %s\n", o.Outcome.Status, termtext.Text(o.Outcome.Text))
	}
}

func pickAgent(cfg *config.Config, name string) (*config.Agent, error) {
	if a := cfg.Agent(name); a != nil {
		return a, nil
	}
	return nil, usagef("%s has no agent %q; its agents: %s", cfg.Path, name, strings.Join(cfg.AgentNames(), ", "))
}
