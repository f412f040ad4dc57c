package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

// NewCmdRoot builds the hitl command tree.
func NewCmdRoot(ios *IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "hitl",
		Short: "Run an LLM agent from a shell, headless, with a human in the loop",
		Long: `hitl runs an agent defined in an agent.yaml. When the agent asks a question
or wants to run a shell command, hitl asks the person at the terminal, or reads
the answer as a line of JSON on standard input when there is no terminal, so
agents can run unattended but not unsupervised.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return c.Help()
		},
	}
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath())}
	})
	root.AddCommand(
		NewCmdExec(ios, nil),
		NewCmdAsk(ios, nil),
		NewCmdResume(ios, nil),
		NewCmdValidate(ios, nil),
		NewCmdSessions(ios),
		NewCmdVersion(ios),
	)
	root.AddCommand(newHelpAnswers())
	root.InitDefaultCompletionCmd()
	return root
}

func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unknown command %q for %q\nRun '%s --help' for usage.", args[0], c.CommandPath(), c.CommandPath())
	}
	return nil
}

func minArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s: missing %s\nUsage: %s", c.CommandPath(), what, c.UseLine())
		}
		return nil
	}
}
