package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hitl-dev/hitl/internal/suggest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
		// hitl exce: did you mean exec?
		SuggestionsMinimumDistance: 2,
		RunE: func(c *cobra.Command, args []string) error {
			return c.Help()
		},
	}
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{fmt.Errorf("%w%s\nRun '%s --help' for usage.", err, flagDidYouMean(c, err), c.CommandPath())}
	})
	root.AddCommand(
		NewCmdExec(ios, nil),
		NewCmdAsk(ios, nil),
		NewCmdMcp(ios, nil),
		NewCmdResume(ios, nil),
		NewCmdValidate(ios, nil),
		NewCmdSessions(ios),
		NewCmdReceipts(ios),
		NewCmdVersion(ios),
	)
	root.AddCommand(newHelpAnswers())
	root.InitDefaultCompletionCmd()
	return root
}

// flagDidYouMean is the flag of c an unknown --flag is closest to:
// hitl exec --jsn: did you mean "json"?
func flagDidYouMean(c *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	mean := suggest.DidYouMean(name, names)
	if mean == "" {
		return ""
	}
	return strings.Replace(mean, `"`, `"--`, 1)
}

func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		mean := ""
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			mean = "\nDid you mean " + strings.Join(s, " or ") + "?"
		}
		return usagef("unknown command %q for %q%s\nRun '%s --help' for usage.", args[0], c.CommandPath(), mean, c.CommandPath())
	}
	return nil
}

func minArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("missing %s\nUsage: %s", what, c.UseLine())
		}
		return nil
	}
}

// messageArgs makes c's flags end where its message begins (DESIGN §2):
// flags may stand before the first argument (AGENT.yaml, SESSION) or right
// after it; from the first message word on, every word is message text,
// so "fix the --yolo handling" never turns on --yolo. "--" ends the flags
// explicitly (for a message whose first word starts with a dash).
func messageArgs(c *cobra.Command) {
	c.Flags().SetInterspersed(false)
}

// splitMessage parses the flags standing right after the first argument
// and returns the first argument and the message words. A --help there
// returns pflag.ErrHelp.
func splitMessage(c *cobra.Command, args []string) (string, []string, error) {
	first, rest := args[0], args[1:]
	if err := c.Flags().Parse(rest); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return "", nil, err
		}
		return "", nil, &usageError{fmt.Errorf("%w\nRun '%s --help' for usage; a message whose first word starts with a dash goes after --", err, c.CommandPath())}
	}
	if help, _ := c.Flags().GetBool("help"); help {
		return "", nil, pflag.ErrHelp
	}
	return first, c.Flags().Args(), nil
}
