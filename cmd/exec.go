package cmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/termtext"
	"github.com/spf13/cobra"
)

// ExecOptions are the inputs of hitl exec.
type ExecOptions struct {
	IO *IOStreams

	AgentFile     string
	Message       []string
	AgentName     string
	MessageFile   string
	JSON          bool
	Quiet         bool
	MaxIterations int
	WorkingDir    string
	Yolo          bool
	Session       string
	PromptOptions
	ModelOptions
}

// NewCmdExec runs an agent headless.
func NewCmdExec(ios *IOStreams, runF func(context.Context, *ExecOptions) error) *cobra.Command {
	opts := &ExecOptions{IO: ios}
	c := &cobra.Command{
		Use:   "exec AGENT.yaml [MESSAGE...]",
		Short: "Run an agent headless; MESSAGE is the first user turn",
		Long: `Run the agent defined in AGENT.yaml. MESSAGE (its words joined by a space)
is the first user turn; /NAME runs the agent's named command NAME. With no
message the first turn is "` + exec.DefaultMessage + `"

The final answer goes to stdout; progress goes to stderr. With --json, stdout
is one JSON event per line instead.`,
		Example: `  hitl exec agents/hello.yaml "hi"
  hitl exec --json agents/hello.yaml | jq -c .`,
		Args: minArgs(1, "AGENT.yaml"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.AgentFile, opts.Message = args[0], args[1:]
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return execRun(c.Context(), opts)
		},
	}
	addRunFlags(c, opts, true)
	return c
}

// addRunFlags adds the flags exec and resume share; exec alone names the
// agent and the first message.
func addRunFlags(c *cobra.Command, opts *ExecOptions, isExec bool) {
	f := c.Flags()
	if isExec {
		f.StringVarP(&opts.AgentName, "agent", "a", "", "agent to run (default root, else the first agent in the file)")
		f.StringVar(&opts.MessageFile, "message-file", "", "read the first user turn from `FILE`")
		f.StringVar(&opts.Session, "session", "", "keep the session journal in `FILE` (default under the XDG state dir; kept after success when named)")
	}
	f.BoolVar(&opts.JSON, "json", false, "write JSONL events to stdout")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress on stderr")
	f.IntVar(&opts.MaxIterations, "max-iterations", 0, "`N` model turns before the run stops with an error (default from the agent file, else 50)")
	f.StringVar(&opts.WorkingDir, "working-dir", "", "`DIR` where shell commands run (default the current directory)")
	f.BoolVar(&opts.Yolo, "yolo", false, "approve every shell command without asking (deny and ask rules still apply)")
	opts.PromptOptions.addFlags(f, true)
	opts.ModelOptions.addFlags(f)
}

func execRun(ctx context.Context, opts *ExecOptions) error {
	start := time.Now()
	cfg, err := config.Load(opts.AgentFile, opts.IO.LookupEnv)
	if err != nil {
		return err
	}
	agent, err := pickAgent(cfg, opts.AgentName)
	if err != nil {
		return err
	}
	message, err := firstMessage(agent, opts)
	if err != nil {
		return err
	}
	runID := newRunID()
	journal, err := createSession(opts, cfg, agent, runID, message)
	if err != nil {
		return err
	}
	return runAgent(ctx, opts, &runSpec{
		start:   start,
		cfg:     cfg,
		agent:   agent,
		runID:   runID,
		message: message,
		journal: journal,
		keep:    opts.Session != "",
		state:   &exec.State{Messages: []exec.Message{{Role: exec.RoleUser, Text: message}}},
	})
}

// newSinks returns the event sink for the run, and the function that reports
// the end of the run and returns the command's error. broken is called once
// when stdout is closed, to end the run as a signal would (DESIGN §6).
func newSinks(opts *ExecOptions, mode string, broken func()) (exec.Sink, func(error, exec.Outcome, *exec.State, time.Time, string) error) {
	ios := opts.IO
	if opts.JSON {
		js := &jsonSink{w: ios.Out, onBroken: broken}
		return js, func(runErr error, out exec.Outcome, st *exec.State, start time.Time, sessionPath string) error {
			fin := finished(runErr, out, st, start)
			fin.Session = sessionPath
			js.Emit(exec.Stamp(fin, "run.finished", time.Now()))
			if runErr == nil && js.err != nil {
				return &signalError{sig: sigPIPE}
			}
			reportOutcome(ios, runErr)
			return runErr
		}
	}
	hs := &humanSink{out: ios.Out, err: ios.ErrOut, quiet: opts.Quiet, outIsTTY: ios.IsStdoutTTY(), showQuestions: mode != "tty"}
	return hs, func(runErr error, out exec.Outcome, st *exec.State, start time.Time, _ string) error {
		if runErr == nil && hs.outErr != nil {
			return &signalError{sig: sigPIPE}
		}
		reportOutcome(ios, runErr)
		if runErr == nil && out.Text != "" && !hs.finalText {
			fmt.Fprintf(ios.ErrOut, "hitl: approved: %s\n", termtext.Text(out.Text))
		}
		return runErr
	}
}

// reportOutcome tells the person why a run did not succeed; errors are
// printed by Main.
func reportOutcome(ios *IOStreams, runErr error) {
	if o, ok := runErr.(*outcomeError); ok {
		fmt.Fprintf(ios.ErrOut, "hitl: %s: %s\n", o.outcome.Status, termtext.Text(o.outcome.Text))
	}
}

// newAsker builds the run's question machinery: the answers file, the front
// end of mode, the unanswered policy, events for every question.
func newAsker(ios *IOStreams, po *PromptOptions, mode string, sink exec.Sink, human bool) (*prompt.Asker, func(), error) {
	policy, err := prompt.ParseUnanswered(po.Unanswered)
	if err != nil {
		return nil, nil, &usageError{err}
	}
	if po.PromptTimeout < 0 {
		return nil, nil, usagef("--prompt-timeout must not be negative")
	}
	asker := &prompt.Asker{
		Timeout:    po.PromptTimeout,
		Unanswered: policy,
		Observer:   &promptObserver{sink: sink},
		Secrets:    &prompt.Secrets{},
	}
	if po.Answers != "" {
		af, err := prompt.LoadAnswers(po.Answers)
		if err != nil {
			return nil, nil, err
		}
		asker.Sources = append(asker.Sources, af)
	}
	var notice io.Writer
	if human {
		notice = ios.ErrOut
	}
	asker.OnBadAnswer = func(b *prompt.BadAnswerError) {
		sink.Emit(exec.Stamp(&exec.ErrorEvent{Message: b.Error(), Line: b.Line, PromptID: b.PromptID}, "error", time.Now()))
	}
	fe, closer, err := frontEnd(ios, mode, notice)
	if err != nil {
		return nil, nil, err
	}
	asker.FrontEnd = fe
	return asker, closer, nil
}

func finished(runErr error, out exec.Outcome, st *exec.State, start time.Time) *exec.RunFinished {
	fin := &exec.RunFinished{
		Status:     Status(runErr),
		ExitCode:   ExitCode(runErr),
		Text:       out.Text,
		Iterations: st.Iterations,
		Usage:      st.Usage,
		DurationMS: time.Since(start).Milliseconds(),
	}
	if runErr != nil {
		if o, ok := runErr.(*outcomeError); ok {
			fin.Text = o.outcome.Text
		} else {
			fin.Error = runErr.Error()
		}
		if stop, ok := runErr.(*prompt.StopError); ok {
			fin.PendingPromptID = stop.Question.ID
		}
	}
	return fin
}

func pickAgent(cfg *config.Config, name string) (*config.Agent, error) {
	if a := cfg.Agent(name); a != nil {
		return a, nil
	}
	return nil, usagef("%s has no agent %q; its agents: %s", cfg.Path, name, strings.Join(cfg.AgentNames(), ", "))
}

var commandRef = regexp.MustCompile(`^/([A-Za-z0-9_.-]+)(?:\s+(.*))?$`)

// firstMessage builds the first user turn (DESIGN §2).
func firstMessage(a *config.Agent, opts *ExecOptions) (string, error) {
	msg := strings.Join(opts.Message, " ")
	if opts.MessageFile != "" {
		if len(opts.Message) > 0 {
			return "", usagef("give the message as arguments or with --message-file, not both")
		}
		if opts.MessageFile == "-" {
			return "", usagef("--message-file -: stdin carries answers to the agent's questions; write the message to a file")
		}
		data, err := os.ReadFile(opts.MessageFile)
		if err != nil {
			return "", usagef("--message-file: %v", err)
		}
		msg = string(data)
	}
	if m := commandRef.FindStringSubmatch(strings.TrimSpace(msg)); m != nil && len(a.Commands) > 0 {
		text, ok := a.Commands[m[1]]
		if !ok {
			names := make([]string, 0, len(a.Commands))
			for n := range a.Commands {
				names = append(names, "/"+n)
			}
			sort.Strings(names)
			return "", usagef("agent %s has no command /%s; its commands: %s", a.Name, m[1], strings.Join(names, ", "))
		}
		if m[2] != "" {
			text += "\n\n" + m[2]
		}
		return text, nil
	}
	if strings.TrimSpace(msg) == "" {
		return exec.DefaultMessage, nil
	}
	return msg, nil
}

// systemPrompt is the agent's instruction plus the date and environment
// facts it asked for.
func systemPrompt(a *config.Agent, now time.Time, workingDir string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(a.Instruction))
	if a.AddDate {
		fmt.Fprintf(&b, "\n\nToday's date is %s.", now.Format("2006-01-02"))
	}
	if a.AddEnvironmentInfo {
		dir := workingDir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		dir, _ = filepath.Abs(dir)
		_, gitErr := os.Stat(filepath.Join(dir, ".git"))
		fmt.Fprintf(&b, "\n\nEnvironment:\n- working directory: %s\n- operating system: %s\n- git repository: %v", dir, runtime.GOOS, gitErr == nil)
	}
	return strings.TrimSpace(b.String())
}

func modelLabel(m *config.Model) string {
	if m.Model == "" {
		return m.Provider + "/" + m.Name
	}
	return m.Provider + "/" + m.Model
}

func newRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405-") + hex.EncodeToString(b[:])
}
