package approver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-dev/hitl/prompt"
)

// Starter runs an approver program (through the run's sandbox, never a
// shell) with stdin, and returns what it wrote on stdout, at most MaxReply
// bytes. An error is a program that failed (not started, a non-zero exit,
// killed).
type Starter interface {
	RunApprover(ctx context.Context, argv []string, stdin []byte) (stdout []byte, err error)
}

// Options are what every approver takes.
type Options struct {
	Run     Run
	Timeout time.Duration // 0: DefaultTimeout
	// Ctx is the run's: an approver waiting ends with it.
	Ctx context.Context
	// Failed is told of each approver that answered nothing.
	Failed Failure
}

func (o Options) source(name string, ask func(context.Context, prompt.Question) (prompt.Answer, string, error)) *source {
	s := &source{name: name, run: o.Run, timeout: o.Timeout, ctx: o.Ctx, failed: o.Failed, ask: ask}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.ctx == nil {
		s.ctx = context.Background()
	}
	return s
}

// NewProgram is the approver program argv (its first word the program's
// path; the rest its arguments: no shell), called name in messages ("":
// argv joined).
func NewProgram(name string, argv []string, start Starter, o Options) prompt.Answerer {
	if name == "" {
		name = strings.Join(argv, " ")
	}
	return o.source(name, func(ctx context.Context, q prompt.Question) (prompt.Answer, string, error) {
		// A fresh nonce: a relay (docs/approver-desk) binds its answer
		// to this question with it.
		nonce := NewNonce()
		req, err := Request(q, o.Run, nonce)
		if err != nil {
			return prompt.Answer{}, "", err
		}
		out, err := start.RunApprover(ctx, argv, append(req, '\n'))
		if err != nil {
			if ctx.Err() != nil {
				return prompt.Answer{}, "", ctx.Err()
			}
			return prompt.Answer{}, "", fmt.Errorf("the program failed: %w", err)
		}
		return parseReply(out, q, nonce, false)
	})
}
