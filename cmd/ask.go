package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/run"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/spf13/cobra"
)

// AskOptions are the inputs of hitl ask.
type AskOptions struct {
	IO       *IOStreams
	Message  string
	Choices  []string
	Multiple bool
	Confirm  bool
	Schema   string
	Default  string
	Secret   bool
	JSON     bool
	Quiet    bool
	// Request is a prompt.request an approver got (--request FILE): the
	// question asked, its answer printed as an approver's answer line.
	Request string
	// nonce is the --request's, for the answer line.
	nonce string
	PromptOptions
}

// NewCmdAsk asks one question without any model.
func NewCmdAsk(ios *IOStreams, runF func(context.Context, *AskOptions) error) *cobra.Command {
	opts := &AskOptions{IO: ios}
	c := &cobra.Command{
		Use:   "ask MESSAGE",
		Short: "Ask one question without any model (for scripts and hooks)",
		Long: `Ask a person one question, on the terminal or as a JSONL line on stdin, and
print the answer's content on stdout (with --json, the whole answer as JSON).

Exit status: 0 accepted (yes), 3 answered no, declined or dismissed,
4 nobody answered (--unanswered stop, the default), 130 interrupted.

In a git hook, git gives the hook its ref lines on stdin: pass --prompt tty
so the question goes to the terminal, not to those lines.`,
		Example: `  hitl ask "Deploy to production?" --confirm && ./deploy.sh
  env=$(hitl ask "Which environment?" --choice staging --choice production=Production)
  token=$(hitl ask "API token?" --secret)
  hitl ask --prompt tty "Push to main?" --confirm   # in a git hook`,
		Args: func(c *cobra.Command, args []string) error {
			if opts.Request != "" {
				if len(args) > 0 {
					return usagef("--request asks the question in the file: give no MESSAGE")
				}
				return nil
			}
			return minArgs(1, "MESSAGE")(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Message = strings.Join(args, " ")
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return askRun(c.Context(), opts)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&opts.Choices, "choice", nil, "an option `ID[=LABEL]` (repeatable): a choice question")
	f.BoolVar(&opts.Multiple, "multiple", false, "allow several choices (printed one per line)")
	f.BoolVar(&opts.Confirm, "confirm", false, "a yes/no question: exit 0 on yes, 3 on no (nothing on stdout)")
	f.StringVar(&opts.Schema, "schema", "", "JSON Schema the answer must satisfy")
	f.StringVar(&opts.Default, "default", "", "the default answer offered on the terminal")
	f.BoolVar(&opts.Secret, "secret", false, "a secret: not echoed on the terminal, never in logs")
	f.BoolVar(&opts.JSON, "json", false, "print the answer as JSON {action, content, text, source}")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress on stderr (the question itself is still drawn on a terminal)")
	f.StringVar(&opts.Request, "request", "", "ask the question of a prompt.request in `FILE` (what an approver gets; - for stdin) and print the answer as an approver's answer line (docs/approvers.md)")
	opts.PromptOptions.addFlags(f, true)
	completeValues(c)
	return c
}

func askRun(ctx context.Context, opts *AskOptions) error {
	q, err := askQuestion(opts)
	if opts.Request != "" {
		q, err = requestQuestion(opts)
	}
	if err != nil {
		return err
	}
	mode, noFE, err := promptModeWhy(opts.IO, opts.Prompt, false)
	if err != nil {
		return err
	}
	prompting, closeFE, err := newPrompting(opts.IO, &opts.PromptOptions, mode, !opts.Quiet)
	if err != nil {
		return err
	}
	defer closeFE()
	prompting.NoFrontEnd = noFE
	progress := &humanSink{err: opts.IO.ErrOut, quiet: opts.Quiet, showQuestions: mode != "tty"}
	ans, q, err := run.Ask(ctx, prompting, progress, opts.IO.ErrOut, q)
	if opts.Request != "" {
		return printApproverLine(opts, q, ans, err)
	}
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != nil {
			return context.Cause(ctx)
		}
		return err
	}
	if err := printAnswer(opts, q, ans); err != nil {
		return err
	}
	if ans.Action != prompt.Accept {
		return &run.OutcomeError{Outcome: exec.Outcome{Status: exec.StatusCancelled, Text: "the question was " + pastTense(ans.Action)}}
	}
	if q.Kind == prompt.KindConfirm && string(ans.Content) == "false" {
		return &run.OutcomeError{Outcome: exec.Outcome{Status: exec.StatusRejected, Text: "answered no"}}
	}
	return nil
}

func pastTense(a prompt.Action) string {
	if a == prompt.Decline {
		return "declined"
	}
	return "dismissed"
}

// askQuestion builds the question the flags describe.
func askQuestion(opts *AskOptions) (prompt.Question, error) {
	kinds := 0
	for _, set := range []bool{len(opts.Choices) > 0, opts.Confirm, opts.Schema != ""} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return prompt.Question{}, usagef("use one of --choice, --confirm and --schema")
	}
	if opts.Multiple && len(opts.Choices) == 0 {
		return prompt.Question{}, usagef("--multiple needs --choice options")
	}
	q := prompt.Question{Kind: prompt.KindText, Tool: "ask", Secret: opts.Secret}
	switch {
	case opts.Schema != "":
		var err error
		if q, err = prompt.FromSchema(json.RawMessage(opts.Schema)); err != nil {
			return q, usagef("--schema: %v", err)
		}
		q.Tool = "ask"
		q.Secret = q.Secret || opts.Secret
	case opts.Confirm:
		q.Kind = prompt.KindConfirm
		q.Schema = json.RawMessage(`{"type":"boolean"}`)
		// Consent: never answered by --unanswered default. Its --default
		// is the invoking person's, not a model's, so a terminal may
		// preselect it, as it does hitl's own refusals.
		q.Consent = prompt.ConsentConfirmNo
	case len(opts.Choices) > 0:
		q.Kind, q.Multiple = prompt.KindChoice, opts.Multiple
		seen := map[string]bool{}
		for _, c := range opts.Choices {
			id, label, ok := strings.Cut(c, "=")
			if !ok {
				label = id
			}
			if id == "" || seen[id] {
				return q, usagef("--choice %q: each option needs a distinct, non-empty id", c)
			}
			seen[id] = true
			q.Options = append(q.Options, prompt.Option{ID: id, Label: label})
			if prompt.YesNoWord(id) || prompt.YesNoWord(label) {
				// Consent: never answered by --unanswered default. Its --default
				// is the invoking person's, not a model's, so a terminal may
				// preselect it, as it does hitl's own refusals.
				q.Consent = prompt.ConsentConfirmNo // a yes/no choice grants something
			}
		}
	}
	q.Message = opts.Message
	if opts.Default != "" {
		def, err := askDefault(q, opts.Default)
		if err != nil {
			return q, usagef("--default %q: %v", opts.Default, err)
		}
		q.Default = def
	}
	return q, nil
}

// askDefault reads --default for the question's kind.
func askDefault(q prompt.Question, v string) (json.RawMessage, error) {
	var def json.RawMessage
	switch {
	case q.Kind == prompt.KindConfirm:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("expected true or false")
		}
		def, _ = json.Marshal(b)
	case q.Kind == prompt.KindChoice && q.Multiple:
		def, _ = json.Marshal(strings.Split(v, ","))
	case q.Kind == prompt.KindChoice || len(q.Schema) == 0:
		def, _ = json.Marshal(v)
	case json.Valid([]byte(v)):
		def = json.RawMessage(v)
	default:
		def, _ = json.Marshal(v)
	}
	if _, err := prompt.Check(q, prompt.Answer{Action: prompt.Accept, Content: def}); err != nil {
		return nil, err
	}
	return def, nil
}

// printAnswer prints the content: a string as is, several choices one per
// line, anything else as JSON; with --json the whole answer.
func printAnswer(opts *AskOptions, q prompt.Question, ans prompt.Answer) error {
	out := opts.IO.Out
	if opts.JSON {
		data, _ := json.Marshal(struct {
			PromptID string          `json:"prompt_id"`
			Action   prompt.Action   `json:"action"`
			Content  json.RawMessage `json:"content,omitempty"`
			Text     string          `json:"text,omitempty"`
			Source   prompt.Source   `json:"source"`
		}{q.ID, ans.Action, ans.Content, ans.Text, ans.Source})
		_, err := fmt.Fprintf(out, "%s\n", data)
		return err
	}
	if ans.Action != prompt.Accept || q.Kind == prompt.KindConfirm && ans.Text == "" {
		// A yes/no answer is the exit code (0 yes, 3 no): stdout stays
		// clean for hitl ask --confirm ... && ./deploy.sh.
		return nil
	}
	if ans.Text != "" {
		_, err := fmt.Fprintln(out, ans.Text)
		return err
	}
	var s string
	if json.Unmarshal(ans.Content, &s) == nil {
		_, err := fmt.Fprintln(out, s)
		return err
	}
	var list []string
	if json.Unmarshal(ans.Content, &list) == nil {
		_, err := fmt.Fprint(out, strings.Join(list, "\n")+"\n")
		return err
	}
	_, err := fmt.Fprintf(out, "%s\n", ans.Content)
	return err
}
