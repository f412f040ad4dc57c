package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/hitl-dev/hitl/contrib/temporal/agentrun"
)

// StartOptions are start's arguments and flags.
type StartOptions struct {
	F          *Factory
	AgentFile  string
	Message    string
	TaskQueue  string
	ID         string
	WorkingDir string
	Timeout    time.Duration
	Unanswered string
	Hitl       string
	Wait       bool
}

// NewCmdStart is hitl-temporal start.
func NewCmdStart(f *Factory, runF func(*cobra.Command, *StartOptions) error) *cobra.Command {
	opts := &StartOptions{F: f}
	cmd := &cobra.Command{
		Use:   "start AGENT.yaml [MESSAGE] --task-queue Q",
		Short: "Start a run of an agent as the workflow AgentRun (the agent file is checked with hitl validate first)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.AgentFile = args[0]
			if len(args) > 1 {
				opts.Message = args[1]
			}
			if runF != nil {
				return runF(cmd, opts)
			}
			return startRun(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.TaskQueue, "task-queue", "", "the workers' task queue (required)")
	cmd.Flags().StringVar(&opts.ID, "id", "", "the workflow id (default hitl-RANDOM)")
	cmd.Flags().StringVar(&opts.WorkingDir, "working-dir", "", "the run's working directory, as the workers see it (default the current directory)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "each wait for an answer ends after DURATION (0: no limit); then --unanswered applies")
	cmd.Flags().StringVar(&opts.Unanswered, "unanswered", "stop", "after --timeout: stop (the run ends, input required), cancel or default")
	cmd.Flags().StringVar(&opts.Hitl, "hitl", "", "the hitl that validates the agent file (default the first on PATH)")
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait for the run to finish and print its result")
	return cmd
}

func startRun(cmd *cobra.Command, opts *StartOptions) error {
	if opts.TaskQueue == "" {
		return usagef("start needs --task-queue")
	}
	switch opts.Unanswered {
	case "stop", "cancel", "default":
	default:
		return usagef("--unanswered %q: expected stop, cancel or default", opts.Unanswered)
	}
	if opts.Timeout < 0 {
		return usagef("--timeout must not be negative")
	}
	dir := opts.WorkingDir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	agent := opts.AgentFile
	if !filepath.IsAbs(agent) {
		agent = filepath.Join(dir, agent)
	}
	hitl, err := findHitl(opts.Hitl, opts.F.Getenv)
	if err != nil {
		return err
	}
	// What hitl validate refuses never becomes a workflow.
	var out bytes.Buffer
	v := osexec.CommandContext(cmd.Context(), hitl, "validate", agent)
	v.Dir, v.Stdout, v.Stderr = dir, &out, &out
	if err := v.Run(); err != nil {
		var ee *osexec.ExitError
		if errors.As(err, &ee) {
			opts.F.Err.Write(out.Bytes())
			return usagef("hitl validate refused %s; no run was started", opts.AgentFile)
		}
		return fmt.Errorf("hitl validate: %w", err)
	}
	id := opts.ID
	if id == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id = "hitl-" + hex.EncodeToString(b)
	}
	c, err := opts.F.Dial(nil)
	if err != nil {
		return err
	}
	defer c.Close()
	in := agentrun.Input{AgentFile: agent, Message: opts.Message, WorkingDir: dir, Timeout: opts.Timeout, Unanswered: opts.Unanswered}
	run, err := c.ExecuteWorkflow(cmd.Context(), client.StartWorkflowOptions{ID: id, TaskQueue: opts.TaskQueue}, agentrun.WorkflowName, in)
	if err != nil {
		return fmt.Errorf("start %s: %w", id, err)
	}
	fmt.Fprintln(opts.F.Out, run.GetID())
	if !opts.Wait {
		return nil
	}
	var res agentrun.Result
	if err := run.Get(cmd.Context(), &res); err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	printResult(opts.F, id, res)
	return nil
}

func printResult(f *Factory, id string, res agentrun.Result) {
	line := fmt.Sprintf("%s: %s (exit %d)", id, res.Status, res.ExitCode)
	if res.TimedOut {
		line += ": nobody answered in time"
	}
	if res.Error != "" {
		line += ": " + res.Error
	}
	fmt.Fprintln(f.Out, strings.TrimSpace(line))
}
