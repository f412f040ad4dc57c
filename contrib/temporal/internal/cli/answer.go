package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/hitl-dev/hitl/contrib/temporal/agentrun"
)

// AnswerOptions are answer's arguments and flags.
type AnswerOptions struct {
	F       *Factory
	ID      string
	Answers string
}

// NewCmdAnswer is hitl-temporal answer.
func NewCmdAnswer(f *Factory, runF func(*cobra.Command, *AnswerOptions) error) *cobra.Command {
	opts := &AnswerOptions{F: f}
	cmd := &cobra.Command{
		Use:   "answer ID --answers FILE",
		Short: "Answer a waiting run (an AG-UI resume document or an answers file; - reads stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd, opts)
			}
			return answerRun(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Answers, "answers", "", "the answer: FILE, or - for stdin (required)")
	return cmd
}

func answerRun(cmd *cobra.Command, opts *AnswerOptions) error {
	if opts.Answers == "" {
		return usagef("answer needs --answers FILE")
	}
	var r io.Reader = cmd.InOrStdin()
	if opts.Answers != "-" {
		f, err := os.Open(opts.Answers)
		if err != nil {
			return usagef("--answers: %v", err)
		}
		defer f.Close()
		r = f
	}
	doc, err := io.ReadAll(io.LimitReader(r, agentrun.MaxAnswer+1))
	if err != nil {
		return usagef("--answers: %v", err)
	}
	if len(doc) > agentrun.MaxAnswer {
		return usagef("--answers %s is longer than %d bytes", opts.Answers, agentrun.MaxAnswer)
	}
	c, err := opts.F.Dial(nil)
	if err != nil {
		return err
	}
	defer c.Close()
	h, err := c.UpdateWorkflow(cmd.Context(), client.UpdateWorkflowOptions{
		WorkflowID: opts.ID, UpdateName: agentrun.UpdateAnswer, Args: []any{agentrun.AnswerArg(doc)},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var out string
	if err == nil {
		err = h.Get(cmd.Context(), &out)
	}
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return usagef("run %s: no such run, or it has finished: %v", opts.ID, err)
		}
		return usagef("run %s: the answer was refused: %v", opts.ID, err)
	}
	fmt.Fprintf(opts.F.Out, "%s: %s\n", opts.ID, out)
	return nil
}
