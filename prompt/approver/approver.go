// Package approver carries questions to people who are not at the runner
// (DESIGN §14): an approver program (JSON on stdin, one answer line on
// stdout) or a webhook (a signed POST; the answer in the reply, or polled
// for). Each is a prompt.Answerer consulted after the session replay and
// the answers file, before the front end. An approver that fails — a
// non-zero exit, a timeout, garbage, a refused signature — answers nothing
// (fail closed): the question goes on to the next source, and the failure
// is said.
package approver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-dev/hitl/prompt"
)

// DefaultTimeout bounds one approver's answer to one question.
const DefaultTimeout = 10 * time.Minute

// MaxReply bounds what an approver may send back.
const MaxReply = 1 << 20

// Run is what an approver is told of the run a question comes from.
type Run struct {
	RunID   string
	Cwd     string
	Session string
}

// Interrupt is a pending question in AG-UI's interrupt shape.
type Interrupt struct {
	ID             string          `json:"id"`
	Reason         string          `json:"reason"`
	Message        string          `json:"message"`
	ToolCallID     string          `json:"tool_call_id"`
	Agent          string          `json:"agent,omitempty"`
	ResponseSchema json.RawMessage `json:"response_schema"`
}

// InterruptOf is q as an AG-UI interrupt: reason is "confirmation" for a
// consent question (an approval, a yes/no), "input_required" otherwise.
func InterruptOf(q prompt.Question) Interrupt {
	reason := "input_required"
	if q.Consent.IsConsent() {
		reason = "confirmation"
	}
	schema := q.Schema
	if len(schema) == 0 {
		switch q.Kind {
		case prompt.KindConfirm:
			schema = json.RawMessage(`{"type":"boolean"}`)
		case prompt.KindChoice:
			ids := make([]string, len(q.Options))
			for i, o := range q.Options {
				ids[i] = o.ID
			}
			if q.Multiple {
				schema, _ = json.Marshal(map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": ids}})
			} else {
				schema, _ = json.Marshal(map[string]any{"type": "string", "enum": ids})
			}
		default:
			schema = json.RawMessage(`{"type":"string"}`)
		}
	}
	return Interrupt{ID: q.ID, Reason: reason, Message: q.Message, ToolCallID: q.CallID, Agent: q.Agent, ResponseSchema: schema}
}

// Request is the JSON an approver gets: the prompt.request event's fields,
// and the run's.
func Request(q prompt.Question, run Run, nonce string) ([]byte, error) {
	if q.Options == nil {
		q.Options = []prompt.Option{}
	}
	b, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["type"] = "prompt.request"
	m["time"] = time.Now().UTC().Format(time.RFC3339Nano)
	m["consent"] = q.Consent.IsConsent()
	m["run_id"] = run.RunID
	m["cwd"] = run.Cwd
	m["session"] = run.Session
	m["agent"] = q.Agent
	m["interrupt"] = InterruptOf(q)
	if nonce != "" {
		m["nonce"] = nonce
	}
	return json.Marshal(m)
}

// NewNonce is a fresh random nonce for one question.
func NewNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// errPass is an approver leaving the question to the next source.
var errPass = errors.New("pass")

// parseReply reads an approver's answer line: the answer grammar of
// DESIGN §5, with "approver" (who answered) and "nonce" (the binding)
// taken out first, or {"action":"pass"}. The consent rule decides what it
// answers (prompt.Admit): a webhook's reply carries the nonce sent with
// the question in every form (required); a program's may (a relay such
// as docs/approver-desk), and then it must be this question's.
func parseReply(reply []byte, q prompt.Question, nonce string, required bool) (prompt.Answer, string, error) {
	reply = bytes.TrimSpace(reply)
	if i := bytes.IndexByte(reply, '\n'); i >= 0 {
		if len(bytes.TrimSpace(reply[i:])) > 0 {
			return prompt.Answer{}, "", errors.New("more than one line: answer with one JSON line")
		}
		reply = reply[:i]
	}
	// Checked whole first: not JSON, not UTF-8, a key given twice (which
	// "nonce" counts must never be a question).
	if len(reply) == 0 {
		return prompt.Answer{}, "", errors.New("an empty reply: answer with one JSON line, or {\"action\":\"pass\"}")
	}
	if err := prompt.ValidLine(reply); err != nil {
		return prompt.Answer{}, "", err
	}
	identity := ""
	var carried *string
	var obj map[string]json.RawMessage
	if json.Unmarshal(reply, &obj) == nil && obj != nil {
		if v, ok := obj["approver"]; ok {
			if json.Unmarshal(v, &identity) != nil {
				return prompt.Answer{}, "", errors.New(`"approver" must be a string naming who answered`)
			}
			delete(obj, "approver")
		}
		if v, ok := obj["nonce"]; ok {
			var n string
			if json.Unmarshal(v, &n) != nil {
				return prompt.Answer{}, "", errors.New(`"nonce" must be the string sent with the question`)
			}
			carried = &n
			delete(obj, "nonce")
		}
		if a, ok := obj["action"]; ok && string(a) == `"pass"` && (len(obj) == 1 || len(obj) == 2 && obj["prompt_id"] != nil) {
			// A pass answers nothing, but what it names is checked all
			// the same: a pass for another question is a failure said.
			var id string
			if v, ok := obj["prompt_id"]; ok {
				var err error
				if id, err = prompt.PromptIDOf(v); err != nil {
					return prompt.Answer{}, "", err
				}
			}
			if err := prompt.Bound(q, id, carried, sentNonce(nonce, required, carried)); err != nil {
				return prompt.Answer{}, "", err
			}
			return prompt.Answer{}, identity, errPass
		}
		reply, _ = json.Marshal(obj)
	}
	sent := sentNonce(nonce, required, carried)
	l, _, err := prompt.ParseLine(reply)
	if err != nil {
		return prompt.Answer{}, "", err
	}
	l.Answer.Source = prompt.SourceApprover
	a, err := prompt.Admit(q, prompt.Reply{Answer: l.Answer, PromptID: l.PromptID, Nonce: carried}, sent)
	if err != nil {
		return prompt.Answer{}, "", err
	}
	return a, identity, nil
}

// sentNonce is the nonce a reply must carry: the one sent, for a webhook
// (required) or a reply that carries one; none for a program's reply that
// carries none (its stdout is its answer to this question alone).
func sentNonce(nonce string, required bool, carried *string) string {
	if !required && carried == nil {
		return ""
	}
	return nonce
}

// Failure is told of an approver that answered nothing, and why.
type Failure func(name string, q prompt.Question, err error)

// source is what program and webhook approvers share: asking one question
// and turning a failure into no answer.
type source struct {
	name    string
	run     Run
	timeout time.Duration
	ctx     context.Context
	failed  Failure
	ask     func(ctx context.Context, q prompt.Question) (prompt.Answer, string, error)
}

// Answer implements prompt.Answerer.
func (s *source) Answer(q prompt.Question) (prompt.Answer, bool, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	a, identity, err := s.ask(ctx, q)
	if errors.Is(err, errPass) {
		return prompt.Answer{}, false, nil
	}
	if err != nil {
		if s.ctx.Err() != nil {
			return prompt.Answer{}, false, s.ctx.Err() // the run is ending
		}
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", s.timeout)
		}
		if s.failed != nil {
			s.failed(s.name, q, err)
		}
		return prompt.Answer{}, false, nil
	}
	if identity == "" {
		identity = s.name
	} else {
		identity = identity + " (via " + s.name + ")"
	}
	a.Approver = identity
	return a, true, nil
}
