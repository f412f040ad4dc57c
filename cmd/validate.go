package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/configcheck"
	"github.com/hitl-dev/hitl/exec/run"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/exec/tools/rag"
	"github.com/hitl-dev/hitl/exec/tools/skills"
	"github.com/spf13/cobra"
)

// ValidateOptions are the inputs of hitl validate.
type ValidateOptions struct {
	IO    *IOStreams
	Files []string
}

// NewCmdValidate checks agent files.
func NewCmdValidate(ios *IOStreams, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{IO: ios}
	return &cobra.Command{
		Use:   "validate AGENT.yaml...",
		Short: "Check agent files; errors are printed as FILE:LINE:COL: message",
		Args:  minArgs(1, "AGENT.yaml"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return validateRun(opts)
		},
	}
}

func validateRun(opts *ValidateOptions) error {
	failed := 0
	var first error
	for _, file := range opts.Files {
		cfg, err := config.Load(file, opts.IO.LookupEnv, configcheck.Checks())
		if unset := unsetVars(err); unset != nil {
			// Linting in CI without the file's secrets: an unset ${VAR} is a
			// note here; hitl exec still refuses it (exit 2).
			for _, e := range unset {
				fmt.Fprintf(opts.IO.ErrOut, "%s: note: %s (hitl exec needs it)\n", strings.TrimSuffix(e.Error(), ": "+e.Msg), strings.TrimSuffix(e.Msg, "; set it or remove the reference"))
			}
			cfg, err = config.Load(file, func(k string) (string, bool) {
				if v, ok := opts.IO.LookupEnv(k); ok {
					return v, true
				}
				return "", true
			}, configcheck.Checks())
		}
		if err != nil {
			failed++
			if first == nil {
				first = err
			}
			fmt.Fprintln(opts.IO.ErrOut, err)
			continue
		}
		fmt.Fprintf(opts.IO.Out, "%s: ok (%s)\n", file, summary(cfg))
		sandboxWarning(opts.IO, file, cfg)
		for _, n := range config.TeamCycles(cfg) {
			fmt.Fprintf(opts.IO.ErrOut, "%s:%d:%d: note: %s\n", file, n.Pos.Line, n.Pos.Col, n.Msg)
		}
		for _, a := range cfg.Agents {
			for _, m := range a.MissingPromptFiles {
				fmt.Fprintf(opts.IO.ErrOut, "%s:%d:%d: note: add_prompt_files: %s is found neither next to the agent file, nor in the working directory or its parents, nor in the home directory: it adds nothing\n", file, m.Pos.Line, m.Pos.Col, m.Name)
			}
			if a.WelcomeMessage != "" {
				fmt.Fprintf(opts.IO.ErrOut, "%s:%d:%d: note: welcome_message is accepted but not used by hitl\n", file, a.Pos.Line, a.Pos.Col)
			}
			if m := a.Model; m != nil && m.Auto != "" {
				fmt.Fprintf(opts.IO.ErrOut, "%s:%d:%d: note: model: auto is %s/%s (%s)\n", file, m.Pos.Line, m.Pos.Col, m.Provider, m.Model, m.Auto)
			}
			for _, ts := range a.Toolsets {
				if ts.DeferAll && ts.Instruction != "" {
					fmt.Fprintf(opts.IO.ErrOut, "%s:%d:%d: note: this %s toolset's instruction is not in the system prompt: with defer: true, none of its guidance is (as in cagent)\n", file, ts.Pos.Line, ts.Pos.Col, ts.Type)
				}
			}
		}
		skillNotes(opts.IO, file, cfg)
		ragNotes(opts.IO, file, cfg)
	}
	if failed > 0 {
		return &reportedError{fmt.Errorf("%d of %d files have errors: %w", failed, len(opts.Files), first)}
	}
	return nil
}

// maxSkillLines is how many skills hitl validate names one by one.
const maxSkillLines = 20

// skillNotes says, at the first agent with skills:, which skills a run
// started here would find (the search does not depend on the agent), and
// which files named SKILL.md are skipped and why.
func skillNotes(ios *IOStreams, file string, cfg *config.Config) {
	var at *config.Agent
	for _, a := range cfg.Agents {
		if a.Skills {
			at = a
			break
		}
	}
	if at == nil {
		return
	}
	where := fmt.Sprintf("%s:%d:%d", file, at.SkillsPos.Line, at.SkillsPos.Col)
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	set := skills.Discover(home, cwd)
	for _, n := range set.Notes {
		fmt.Fprintf(ios.ErrOut, "%s: note: skills: %s\n", where, n)
	}
	if set.Dropped > 0 {
		fmt.Fprintf(ios.ErrOut, "%s: note: skills: %d more notes left out\n", where, set.Dropped)
	}
	if len(set.Skills) == 0 {
		fmt.Fprintf(ios.ErrOut, "%s: note: skills: true found no skill in %s: the model gets no read_skill\n", where, skills.Printable(strings.Join(set.Searched, ", ")))
		return
	}
	for i, sk := range set.Skills {
		if i == maxSkillLines {
			fmt.Fprintf(ios.ErrOut, "%s: note: skills: and %d more\n", where, len(set.Skills)-i)
			break
		}
		fmt.Fprintf(ios.ErrOut, "%s: note: skills: %q from %s\n", where, sk.Name, skills.Printable(sk.Path))
	}
}

// ragNotes reads each rag entry's documents as a run would and says, at
// the entry, which are skipped and why, and what would stop the run.
func ragNotes(ios *IOStreams, file string, cfg *config.Config) {
	entries := map[string]*config.RAG{}
	var names []string
	for _, a := range cfg.Agents {
		for _, r := range a.RAG {
			if entries[r.Name] == nil {
				entries[r.Name] = r
				names = append(names, r.Name)
			}
		}
	}
	sort.Strings(names)
	deny := run.StateDirs(ios.Getenv)
	for _, name := range names {
		r := entries[name]
		where := fmt.Sprintf("%s:%d:%d", file, r.Pos.Line, r.Pos.Col)
		skipped, err := rag.Skipped(context.Background(), r, deny)
		for _, msg := range skipped {
			fmt.Fprintf(ios.ErrOut, "%s: note: rag %s: skipped %s\n", where, name, msg)
		}
		if err != nil {
			fmt.Fprintf(ios.ErrOut, "%s: warning: %v; hitl exec will stop there\n", where, err)
		}
	}
}

// unsetVars returns the errors of err when every one is an unset ${VAR},
// nil otherwise.
func unsetVars(err error) config.Errors {
	var errs config.Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		return nil
	}
	for _, e := range errs {
		if !strings.HasPrefix(e.Msg, "environment variable ") || !strings.Contains(e.Msg, " is not set ") {
			return nil
		}
	}
	return errs
}

// sandboxWarning says when the file's allow rules will not apply on this
// machine: no sandbox can confine commands here (DESIGN §12), or the one
// the file names is missing.
func sandboxWarning(ios *IOStreams, file string, cfg *config.Config) {
	p := cfg.Permissions
	mode, err := sandbox.ParseMode(p.Sandbox)
	if err != nil {
		return // config reported it
	}
	where := file
	if p.SandboxPos.Line > 0 {
		where = fmt.Sprintf("%s:%d:%d", file, p.SandboxPos.Line, p.SandboxPos.Col)
	}
	c, err := sandbox.Probe(mode)
	switch {
	case err != nil:
		fmt.Fprintf(ios.ErrOut, "%s: warning: %v; hitl exec will refuse to run this file here\n", where, err)
	case (c.Mechanism == sandbox.MechNone || c.Mechanism == sandbox.MechBwrap) && mode != sandbox.Off && len(p.Allow) > 0:
		// Neither, or bwrap without Landlock: allow rules do not apply.
		fmt.Fprintf(ios.ErrOut, "%s: warning: %s\n", where, c.Why)
	}
}

func summary(cfg *config.Config) string {
	n := len(cfg.Agents)
	if n == 1 {
		return "1 agent"
	}
	return fmt.Sprintf("%d agents", n)
}
