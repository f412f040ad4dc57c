package run

// Approvals that leave the terminal (DESIGN §14): approver programs and
// webhooks asked before the front end, and a receipt of each consent
// answer.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/user"
	"strings"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/receipt"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/approver"
)

// Approver is one --approver, checked by the command line: a program
// (Argv) or a webhook (URL, signed with Secret).
type Approver struct {
	Argv   []string
	URL    *url.URL
	Secret string
	// Name is the program as given (what the person wrote), for messages.
	Name string
}

// approvers are the run's approver sources, in the order given.
func (r *Run) approvers(ctx context.Context) []prompt.Answerer {
	o := approver.Options{
		Run:     approver.Run{RunID: r.runID, Cwd: r.cwd(), Session: r.journal.Path()},
		Timeout: r.opts.ApproverTimeout,
		Ctx:     ctx,
		Failed: func(name string, q prompt.Question, err error) {
			msg := fmt.Sprintf("approver %s answered nothing for question %s: %v", name, q.ID, err)
			r.emit(&exec.ErrorEvent{Message: msg, PromptID: q.ID}, "error")
			r.notice("%s", termtext.Line(msg))
		},
	}
	var out []prompt.Answerer
	for _, a := range r.opts.Approvers {
		if a.URL != nil {
			if w, err := approver.NewWebhook(a.URL, a.Secret, nil, o); err == nil {
				out = append(out, w)
			}
			continue
		}
		out = append(out, approver.NewProgram(a.Name, a.Argv, approverStarter{r}, o))
	}
	return out
}

func (r *Run) cwd() string {
	if r.opts.WorkingDir != "" {
		return r.opts.WorkingDir
	}
	wd, _ := os.Getwd()
	return wd
}

// approverStarter runs approver programs through the run's sandbox, with
// the environment its commands get (no model or session keys).
type approverStarter struct{ r *Run }

// maxApproverStderr is what is kept of an approver's stderr for the
// error that says why it failed.
const maxApproverStderr = 4 << 10

func (s approverStarter) RunApprover(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	out := &capped{max: approver.MaxReply}
	errOut := &capped{max: maxApproverStderr}
	c := s.r.sandbox.Command(ctx, sandbox.Spec{
		Path: argv[0], Args: argv[1:], Dir: s.r.cwd(), Env: s.r.approverEnv(),
		Stdin: bytes.NewReader(stdin), Stdout: out, Stderr: errOut, Class: sandbox.ClassApprover,
	})
	err := c.Run()
	if out.over {
		return nil, fmt.Errorf("it wrote more than %d bytes", approver.MaxReply)
	}
	if err != nil {
		msg := sandbox.Describe(err)
		if last := lastLine(errOut.String()); last != "" {
			msg += ": " + last
		}
		return nil, errors.New(msg)
	}
	return out.Bytes(), nil
}

// approverEnv is hitl's environment without the model keys and the
// session key (an approver is the operator's, but a key it never needs is
// a key it cannot leak).
func (r *Run) approverEnv() []string {
	hidden := map[string]bool{}
	for _, k := range r.hiddenEnv() {
		hidden[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !hidden[k] && k != approver.SecretEnv {
			env = append(env, kv)
		}
	}
	return env
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		c.over = true
		c.Buffer.Write(p[:max(0, c.max-c.Len())])
		return 0, io.ErrShortWrite // the copy stops; the program's next write fails
	}
	return c.Buffer.Write(p)
}

// ReadFrom goes through Write: bytes.Buffer's would take all there is.
func (c *capped) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{c}, r)
}

// receipts is the run's receipt writer: each consent answer recorded,
// chained, and signed with --sign-key.
func (r *Run) receipts() *receipt.Writer {
	w := &receipt.Writer{
		RunID:  r.runID,
		Signer: r.opts.SignKey,
		Who:    r.who,
		Record: r.journal.Receipt,
		Failed: func(err error) { r.notice("%v", err) },
	}
	if r.loaded != nil {
		w.Continue(r.loaded.Receipts)
	}
	return w
}

// who says who gave an answer, by where it came from.
func (r *Run) who(q prompt.Question, a prompt.Answer) string {
	switch a.Source {
	case prompt.SourceTTY:
		return fmt.Sprintf("user %s on terminal %s", userName(), terminalName())
	case prompt.SourceJSONL:
		return fmt.Sprintf("a JSONL answer line on stdin (user %s)", userName())
	case prompt.SourceAnswers:
		if f := r.opts.Answers; f != nil {
			return fmt.Sprintf("answers file %s (sha256 %s)", f.Path(), f.SHA256())
		}
		return "answers file"
	case prompt.SourceApprover:
		return "approver " + a.Approver
	case prompt.SourceHook:
		return "the " + a.Approver + " of " + r.cfg.Path
	case prompt.SourceSession:
		return "an answer given before the run stopped (session replay)"
	}
	return "nobody (" + string(a.Source) + ")"
}

func userName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

func terminalName() string {
	for _, fd := range []string{"/proc/self/fd/0", "/proc/self/fd/2"} {
		t, err := os.Readlink(fd)
		if err == nil && (strings.HasPrefix(t, "/dev/pts/") || strings.HasPrefix(t, "/dev/tty")) {
			return t
		}
	}
	return "/dev/tty"
}
