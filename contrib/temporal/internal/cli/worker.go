package cli

import (
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hitl-dev/hitl/contrib/temporal/agentrun"
)

// keyEnv is hitl's session key variable: the workers' shared secret.
const keyEnv = "HITL_SESSION_KEY"

// WorkerOptions are worker's flags.
type WorkerOptions struct {
	F             *Factory
	TaskQueue     string
	Hitl          string
	Store         string
	MaxActivities int
}

// NewCmdWorker is hitl-temporal worker.
func NewCmdWorker(f *Factory, runF func(*cobra.Command, *WorkerOptions) error) *cobra.Command {
	opts := &WorkerOptions{F: f}
	cmd := &cobra.Command{
		Use:   "worker --task-queue Q",
		Short: "Run AgentRun workflows and their hitl activities (needs HITL_SESSION_KEY)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd, opts)
			}
			return workerRun(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.TaskQueue, "task-queue", "", "the task queue to poll (required)")
	cmd.Flags().StringVar(&opts.Hitl, "hitl", "", "the hitl binary (default the first hitl on PATH)")
	cmd.Flags().StringVar(&opts.Store, "store", "", "directory of the runs' journals, shared by all workers (default $XDG_STATE_HOME/hitl-temporal)")
	cmd.Flags().IntVar(&opts.MaxActivities, "max-activities", 0, "hitl processes run at once (default 2 per CPU)")
	return cmd
}

func workerRun(cmd *cobra.Command, opts *WorkerOptions) error {
	if opts.TaskQueue == "" {
		return usagef("worker needs --task-queue")
	}
	hitl, err := findHitl(opts.Hitl, opts.F.Getenv)
	if err != nil {
		return err
	}
	if len(opts.F.Getenv(keyEnv)) < 16 {
		return usagef("the worker needs %s (at least 16 characters, the same on every worker): it authenticates the runs' journals and never enters workflow history", keyEnv)
	}
	store, err := storeDir(opts.Store, opts.F.Getenv)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(store, 0o700); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	c, err := opts.F.Dial(stderrLogger{opts.F.Err})
	if err != nil {
		return err
	}
	defer c.Close()
	maxActs := opts.MaxActivities
	if maxActs <= 0 {
		maxActs = 2 * runtime.NumCPU()
	}
	w := worker.New(c, opts.TaskQueue, worker.Options{MaxConcurrentActivityExecutionSize: maxActs})
	w.RegisterWorkflowWithOptions(agentrun.AgentRun, workflow.RegisterOptions{Name: agentrun.WorkflowName})
	acts := &agentrun.Activities{Hitl: hitl, Store: store, Env: os.Environ()}
	w.RegisterActivityWithOptions(acts.RunHitl, activity.RegisterOptions{Name: agentrun.ActivityName})
	fmt.Fprintf(opts.F.Err, "hitl-temporal: worker on task queue %s, running %s, journals in %s\n", opts.TaskQueue, hitl, store)
	stop := make(chan any)
	go func() {
		<-cmd.Context().Done()
		close(stop)
	}()
	return w.Run(stop)
}

// findHitl is the hitl a worker runs: --hitl, else the first on PATH.
func findHitl(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		p, err := osexec.LookPath(flag)
		if err != nil {
			return "", usagef("no hitl binary: --hitl %s: %v", flag, err)
		}
		return filepath.Abs(p)
	}
	p, err := osexec.LookPath("hitl")
	if err != nil {
		return "", usagef("no hitl binary: looked for hitl on PATH (%s); install hitl or pass --hitl PATH", strings.Join(filepath.SplitList(getenv("PATH")), ":"))
	}
	return filepath.Abs(p)
}

func storeDir(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	base := getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", usagef("no store directory: pass --store DIR or set XDG_STATE_HOME or HOME")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "hitl-temporal"), nil
}

// stderrLogger is the worker's log: warnings and errors.
type stderrLogger struct{ w io.Writer }

func (stderrLogger) Debug(string, ...any) {}
func (stderrLogger) Info(string, ...any)  {}
func (l stderrLogger) Warn(msg string, kv ...any) {
	fmt.Fprintln(l.w, append([]any{"hitl-temporal: warning:", msg}, kv...)...)
}
func (l stderrLogger) Error(msg string, kv ...any) {
	fmt.Fprintln(l.w, append([]any{"hitl-temporal: error:", msg}, kv...)...)
}
