package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hitl-dev/hitl/contrib/temporal/agentrun"
)

// ResultOptions are result's arguments and flags.
type ResultOptions struct {
	F       *Factory
	ID      string
	Journal string
	Store   string
	JSON    bool
}

// NewCmdResult is hitl-temporal result.
func NewCmdResult(f *Factory, runF func(*cobra.Command, *ResultOptions) error) *cobra.Command {
	opts := &ResultOptions{F: f}
	cmd := &cobra.Command{
		Use:   "result ID [--journal FILE]",
		Short: "Wait for a run to finish; print how it ended and write its journal (for hitl receipts)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd, opts)
			}
			return resultRun(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Journal, "journal", "", "write the run's session journal to FILE (mode 0600)")
	cmd.Flags().StringVar(&opts.Store, "store", "", "the workers' store, for a journal too large for history")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON (without the journal)")
	return cmd
}

func resultRun(cmd *cobra.Command, opts *ResultOptions) error {
	c, err := opts.F.Dial(nil)
	if err != nil {
		return err
	}
	defer c.Close()
	var res agentrun.Result
	if err := c.GetWorkflow(cmd.Context(), opts.ID, "").Get(cmd.Context(), &res); err != nil {
		return fmt.Errorf("run %s: %w", opts.ID, err)
	}
	if opts.Journal != "" {
		data := res.Journal.Data
		if res.Journal.Ref != "" {
			store, err := storeDir(opts.Store, opts.F.Getenv)
			if err != nil {
				return err
			}
			if data, err = os.ReadFile(filepath.Join(store, "blobs", filepath.Base(res.Journal.Ref))); err != nil {
				return fmt.Errorf("the journal of %s is in the workers' store: %w", opts.ID, err)
			}
		}
		if err := os.WriteFile(opts.Journal, data, 0o600); err != nil {
			return err
		}
	}
	if opts.JSON {
		res.Journal.Data = nil
		b, _ := json.Marshal(res)
		fmt.Fprintln(opts.F.Out, string(b))
		return nil
	}
	printResult(opts.F, opts.ID, res)
	return nil
}
