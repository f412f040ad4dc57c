package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hitl-dev/hitl/internal/suggest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// NewCmdRoot builds the hitl command tree, every command in it.
func NewCmdRoot(ios *IOStreams) *cobra.Command {
	return newRoot(ios, nil)
}

// newCmdRootFor builds the tree args need. When args begin with the name of
// one of hitl's commands (hitl ask …, hitl version), only that command is
// built: the flags and help of all the others are work every hitl ask of a
// git hook would pay for at start. Any other args (help, completion, a
// typo to suggest a command for, a flag first) get the whole tree.
func newCmdRootFor(ios *IOStreams, args []string) *cobra.Command {
	if len(args) > 0 {
		for _, c := range commands {
			if c.name == args[0] {
				return newRoot(ios, &c)
			}
		}
	}
	return NewCmdRoot(ios)
}

// command is one of hitl's commands, built when needed.
type command struct {
	name  string
	build func(*IOStreams) *cobra.Command
}

var commands = []command{
	{"exec", func(ios *IOStreams) *cobra.Command { return NewCmdExec(ios, nil) }},
	{"ask", func(ios *IOStreams) *cobra.Command { return NewCmdAsk(ios, nil) }},
	{"mcp", func(ios *IOStreams) *cobra.Command { return NewCmdMcp(ios, nil) }},
	{"resume", func(ios *IOStreams) *cobra.Command { return NewCmdResume(ios, nil) }},
	{"validate", func(ios *IOStreams) *cobra.Command { return NewCmdValidate(ios, nil) }},
	{"sessions", NewCmdSessions},
	{"receipts", NewCmdReceipts},
	{"version", NewCmdVersion},
}

// newRoot is the root command with only's command (nil: every command,
// the help topics and the completion command).
func newRoot(ios *IOStreams, only *command) *cobra.Command {
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
	if only != nil {
		root.AddCommand(only.build(ios))
		// Not "hitl completion": no completion command to build.
		root.CompletionOptions.DisableDefaultCmd = true
		return root
	}
	for _, c := range commands {
		root.AddCommand(c.build(ios))
	}
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
