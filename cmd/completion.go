package cmd

import (
	"path/filepath"
	"strings"

	"github.com/hitl-dev/hitl/exec/session"
	"github.com/spf13/cobra"
)

// completeValues makes the shell complete the values of the flags that
// take one of a few words (--prompt, --unanswered), never file names.
func completeValues(c *cobra.Command) {
	words := map[string][]string{
		"prompt":     {"auto", "tty", "jsonl", "none"},
		"unanswered": {"stop", "cancel", "default"},
	}
	for name, values := range words {
		if c.Flags().Lookup(name) == nil {
			continue
		}
		_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
}

// completeSessions completes hitl resume's SESSION with the run ids kept
// in the state dir (and files, for a session named with --session).
func completeSessions(ios *IOStreams) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp // the message
		}
		dir, err := session.DefaultDir(ios.Getenv)
		if err != nil {
			return nil, cobra.ShellCompDirectiveDefault
		}
		list, _ := session.List(dir)
		var ids []string
		for _, s := range list {
			id := strings.TrimSuffix(filepath.Base(s.Path), ".jsonl")
			if strings.HasPrefix(id, toComplete) {
				ids = append(ids, id+"\t"+s.Agent+" "+string(s.Status))
			}
		}
		return ids, cobra.ShellCompDirectiveDefault
	}
}
