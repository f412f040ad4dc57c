package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/hitl-dev/hitl/contrib/temporal/agentrun"
)

// ListOptions are list's flags.
type ListOptions struct {
	F    *Factory
	JSON bool
}

// NewCmdList is hitl-temporal list.
func NewCmdList(f *Factory, runF func(*cobra.Command, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{F: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the runs waiting for an answer, with their interrupts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd, opts)
			}
			return listRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "one JSON object per waiting run: {id, since, interrupts}")
	return cmd
}

// Waiting is a waiting run as list --json prints it.
type Waiting struct {
	ID         string               `json:"id"`
	Since      string               `json:"since"`
	Interrupts []agentrun.Interrupt `json:"interrupts"`
}

func listRun(cmd *cobra.Command, opts *ListOptions) error {
	c, err := opts.F.Dial(nil)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := cmd.Context()
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:         fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", agentrun.WorkflowName),
			NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		for _, e := range resp.Executions {
			id := e.Execution.GetWorkflowId()
			v, err := c.QueryWorkflow(ctx, id, e.Execution.GetRunId(), agentrun.QueryState)
			if err != nil {
				continue // finished meanwhile, or no worker has it yet
			}
			var st agentrun.State
			if err := v.Get(&st); err != nil || st.Status != agentrun.StatusWaiting {
				continue
			}
			printWaiting(opts, Waiting{ID: id, Since: st.Since.UTC().Format("2006-01-02T15:04:05Z"), Interrupts: st.Interrupts})
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return nil
		}
	}
}

func printWaiting(opts *ListOptions, w Waiting) {
	if opts.JSON {
		b, _ := json.Marshal(w)
		fmt.Fprintln(opts.F.Out, string(b))
		return
	}
	fmt.Fprintf(opts.F.Out, "%s\twaiting since %s\n", w.ID, w.Since)
	for _, in := range w.Interrupts {
		fmt.Fprintf(opts.F.Out, "  %s\t%s\t%s\n", in.ID, in.Reason, oneLine(in.Message))
	}
}

// oneLine shows a message on one line, control characters escaped (the
// message is the model's text).
func oneLine(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(" ⏎ ")
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if len([]rune(out)) > 120 {
		out = string([]rune(out)[:117]) + "..."
	}
	return out
}
