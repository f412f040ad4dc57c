package cmd

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/internal/termtext"
)

// SessionsOptions are the flags of hitl sessions.
type SessionsOptions struct {
	IO   *IOStreams
	JSON bool
	// OlderThan is prune's cutoff age.
	OlderThan time.Duration
	// DryRun lists what prune would remove, removing nothing.
	DryRun bool
	Now    func() time.Time
}

// NewCmdSessions lists and prunes the sessions kept in the state directory.
func NewCmdSessions(ios *IOStreams) *cobra.Command {
	opts := &SessionsOptions{IO: ios, Now: time.Now}
	c := &cobra.Command{
		Use:   "sessions",
		Short: "List the sessions kept in the state directory",
		Long: `List the sessions kept in the state directory ($XDG_STATE_HOME/hitl/sessions):
id (what hitl resume takes), agent, status, age and the question a stopped run
waits for. Sessions written elsewhere with --session are not listed.

A session is kept when its run did not succeed (stopped for input, interrupted,
failed, rejected) or when --session named it; a successful run deletes its own.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return sessionsList(opts)
		},
	}
	c.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object per session")
	prune := &cobra.Command{
		Use:   "prune --older-than DURATION",
		Short: "Remove kept sessions last written longer ago than DURATION",
		Long: `Remove the sessions in the state directory last written longer ago than
DURATION (a Go duration such as 36h, or days: 7d). Sessions a running hitl holds
are left alone.`,
		Example: "  hitl sessions prune --older-than 7d --dry-run\n  hitl sessions prune --older-than 7d",
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			v, _ := c.Flags().GetString("older-than")
			if v == "" {
				return usagef("sessions prune needs --older-than DURATION (e.g. 7d or 36h)")
			}
			d, err := parseAge(v)
			if err != nil {
				return usagef("--older-than %q: %v", v, err)
			}
			opts.OlderThan = d
			opts.DryRun, _ = c.Flags().GetBool("dry-run")
			return sessionsPrune(opts)
		},
	}
	prune.Flags().String("older-than", "", "remove sessions last written longer ago than this (7d, 36h)")
	prune.Flags().Bool("dry-run", false, "list what would be removed, remove nothing")
	c.AddCommand(prune)
	return c
}

// parseAge reads a Go duration, or a whole number of days ("7d").
func parseAge(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 100000 {
			return 0, fmt.Errorf("want a number of days (7d) or a duration (36h)")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a number of days (7d) or a duration (36h)")
	}
	return d, nil
}

func sessionsList(opts *SessionsOptions) error {
	dir, err := session.DefaultDir(opts.IO.Getenv)
	if err != nil {
		return err
	}
	list, err := session.List(dir)
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetEscapeHTML(false)
		for _, s := range list {
			if err := enc.Encode(s); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "hitl: no sessions kept in %s\n", dir)
		return nil
	}
	w := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tAGENT\tSTATUS\tAGE\tPENDING")
	now := opts.Now()
	for _, s := range list {
		status := string(s.Status)
		switch {
		case s.Err != "":
			status = "unreadable"
		case status == "":
			status = "unfinished"
		}
		agent := s.Agent
		if s.AgentFile != "" {
			agent = s.AgentFile + " (" + s.Agent + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.ID, termtext.Line(agent), status, age(now.Sub(s.Modified)), termtext.Line(s.Pending))
	}
	return w.Flush()
}

func sessionsPrune(opts *SessionsOptions) error {
	dir, err := session.DefaultDir(opts.IO.Getenv)
	if err != nil {
		return err
	}
	removed, err := session.Prune(dir, opts.Now().Add(-opts.OlderThan), opts.DryRun)
	verb := "removed"
	if opts.DryRun {
		verb = "would remove"
	}
	for _, p := range removed {
		fmt.Fprintf(opts.IO.Out, "%s %s\n", verb, p)
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintf(opts.IO.ErrOut, "hitl: no session in %s is older than %s\n", dir, opts.OlderThan)
	}
	return err
}

// age is a duration as a person reads it in a listing.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
