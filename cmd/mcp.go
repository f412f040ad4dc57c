package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/hitl-dev/hitl/exec/mcpserver"
	"github.com/hitl-dev/hitl/exec/run"
	"github.com/hitl-dev/hitl/prompt"
)

// McpOptions are the inputs of hitl mcp.
type McpOptions struct {
	IO            *IOStreams
	Prompt        string
	Answers       string
	Unanswered    string
	PromptTimeout time.Duration
	Session       string
	Events        string
	ApproveOptions
}

// NewCmdMcp serves hitl's questions to another agent over MCP.
func NewCmdMcp(ios *IOStreams, runF func(context.Context, *McpOptions) error) *cobra.Command {
	opts := &McpOptions{IO: ios}
	c := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "Serve hitl's questions to any agent as an MCP server over stdio",
		Long: `Serve, over stdio, an MCP server whose tools ask a person through hitl:

  approve            Claude Code's permission prompt tool
                     (claude -p --permission-prompt-tool mcp__hitl__approve)
  ask_user_question  1 to 4 multiple-choice questions (AskUserQuestion's shapes)
  user_prompt        a question with a JSON Schema for the answer

Answers come, in this order, from --answers, each --approver, the person's
terminal (/dev/tty, as stdin and stdout carry the protocol), then
--unanswered: deny (an error result "no one answered: …"; approve denies)
or cancel (the tool's cancel result; approve denies). Nobody answering
never approves. The server runs until the client closes its stdin.`,
		Example: `  claude -p "deploy" --mcp-config '{"mcpServers":{"hitl":{"command":"hitl","args":["mcp","--approver","./approve.sh"]}}}' \
    --permission-prompt-tool mcp__hitl__approve
  codex exec -c 'mcp_servers.hitl.command="hitl"' -c 'mcp_servers.hitl.args=["mcp","--answers","answers.yaml"]' "ask me first"`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return mcpRun(c.Context(), opts)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Prompt, "prompt", "auto", "ask a person on the terminal, `MODE`: auto (/dev/tty when it opens), tty (it must) or none")
	f.StringVar(&opts.Answers, "answers", "", "scripted answers `FILE` (YAML or JSONL), consulted first")
	f.StringVar(&opts.Unanswered, "unanswered", "deny", "what a question nobody answers becomes, `POLICY`: deny or cancel (approve denies either way)")
	f.DurationVar(&opts.PromptTimeout, "prompt-timeout", 0, "a question unanswered on the terminal for `DURATION` (e.g. 5m) is unanswered (0 = no limit)")
	f.StringVar(&opts.Session, "session", "", "keep the journal and the receipts of every answer in `FILE` (hitl receipts FILE)")
	f.StringVar(&opts.Events, "events", "", "append the prompt.request, prompt.answer and error events as JSON lines to `FILE`")
	opts.ApproveOptions.addFlags(f)
	// Not completeValues: hitl mcp takes other values.
	_ = c.RegisterFlagCompletionFunc("prompt", cobra.FixedCompletions([]string{"auto", "tty", "none"}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("unanswered", cobra.FixedCompletions([]string{"deny", "cancel"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func mcpRun(ctx context.Context, opts *McpOptions) (err error) {
	p := run.Prompting{Timeout: opts.PromptTimeout}
	if opts.PromptTimeout < 0 {
		return usagef("--prompt-timeout must not be negative")
	}
	switch opts.Unanswered {
	case "deny":
		// The call's tool says "no one answered: WHY" (the Asker's stop).
		p.Unanswered = prompt.UnansweredStop
	case "cancel":
		p.Unanswered = prompt.UnansweredCancel
	default:
		return usagef("--unanswered %q: expected deny or cancel (hitl mcp never allows what nobody answered)", opts.Unanswered)
	}
	if opts.Answers != "" {
		af, err := prompt.LoadAnswers(opts.Answers)
		if err != nil {
			return err
		}
		if af.Resume() {
			return af.NotResuming()
		}
		p.Answers = af
	}
	if err := opts.ApproveOptions.apply(opts.IO, &p); err != nil {
		return err
	}
	fe, closeFE, why, err := mcpFrontEnd(opts.Prompt)
	if err != nil {
		return err
	}
	defer closeFE()
	p.FrontEnd, p.NoFrontEnd = fe, why
	ro := run.Options{Prompting: p, Session: opts.Session, Notices: opts.IO.ErrOut, Getenv: opts.IO.Getenv}
	if opts.Events != "" {
		f, err := os.OpenFile(opts.Events, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return usagef("--events: %v", err)
		}
		defer f.Close()
		ro.Sink = &jsonSink{w: f}
	}
	desk, err := run.NewDesk(ro)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := desk.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("the session could not be saved: %w", cerr)
		}
	}()
	srv, err := mcpserver.New(desk, mcpserver.Options{Version: version()})
	if err != nil {
		return err
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(opts.IO.In), Writer: nopWriteCloser{opts.IO.Out}}
	err = srv.Run(ctx, t)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if errors.Is(err, io.EOF) {
		return nil // the client closed the connection: its session is over
	}
	return err
}

// mcpFrontEnd is the person's terminal for --prompt MODE: /dev/tty (stdin
// and stdout carry the protocol), else none, and why.
func mcpFrontEnd(mode string) (prompt.FrontEnd, func(), string, error) {
	none := func() {}
	switch mode {
	case "none":
		return nil, none, "", nil
	case "auto", "tty":
	default:
		return nil, none, "", usagef("--prompt %q: expected auto, tty or none", mode)
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		if mode == "tty" {
			return nil, none, "", usagef("--prompt tty: no terminal to ask on (%v); use --answers or --approver", err)
		}
		return nil, none, fmt.Sprintf("no terminal to ask on (/dev/tty: %v)", errors.Unwrap(err)), nil
	}
	fe, closer, err := ttyFrontEnd(f, f, func() { f.Close() })
	return fe, closer, "", err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
