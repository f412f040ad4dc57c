package prompt

import (
	"errors"
	"fmt"
)

// The consent rule: one for every answer source (the terminal, a JSONL
// line, an answers file or AG-UI resume document, an approver program or
// webhook, hitl ask --request at a desk, a permission_request hook, session
// replay). A source hands what it received to Admit, and only what Admit
// returns counts as an answer:
//
//  1. Bound: an answer is for the question it names. One that names a
//     prompt id names this question's; where a nonce was sent with the
//     question (a webhook, a desk), the answer carries that nonce, in
//     every form it may take (a bare value carries none, so it is refused).
//  2. Named: a consent answer names its option (Check: an index, a
//     default or an empty accept never grants anything).
//  3. A person's: a question that hands over a secret or runs a program
//     no sandbox confines (Question.PersonOnly) is answered by a person
//     only (Source.Person): never by a hook, an allow rule or a replay.
//
// And the fourth part, kept by the tools: only a command a person approved
// receives the secrets (Approval.Person).
//
// A refused answer answers nothing: the source says why (stderr, an error
// event) and the question goes on to the next source.

// Reply is an answer as a source received it, with what binds it to a
// question.
type Reply struct {
	Answer Answer
	// PromptID is the prompt id the reply names ("": none; a positional
	// answer).
	PromptID string
	// Nonce is the nonce the reply carries (nil: none).
	Nonce *string
}

// ErrNotBound is a reply that names another question, or does not carry
// the nonce sent with this one.
var ErrNotBound = errors.New("the answer is not bound to this question")

// ErrPersonOnly is an answer to a person-only question from a source that
// is not a person.
var ErrPersonOnly = errors.New("only a person may answer this question")

// Admit applies the consent rule to r, an answer source's reply to q,
// where sent is the nonce sent with q ("" when none was). It returns the
// answer in canonical form (Check), with r.Answer.Source, or an error
// saying why the reply answers nothing (wrapping ErrNotBound or
// ErrPersonOnly, or Check's error).
func Admit(q Question, r Reply, sent string) (Answer, error) {
	if err := Bound(q, r.PromptID, r.Nonce, sent); err != nil {
		return Answer{}, err
	}
	src := r.Answer.Source
	a, err := Check(q, r.Answer)
	if err != nil {
		return Answer{}, err
	}
	a.Source = src
	if err := q.AnsweredBy(src); err != nil {
		return Answer{}, err
	}
	return a, nil
}

// Bound checks the first part of the rule alone: promptID ("" none) is
// q's, and nonce carries sent when sent is not empty.
func Bound(q Question, promptID string, nonce *string, sent string) error {
	if promptID != "" && promptID != q.ID {
		return fmt.Errorf("%w: it names prompt_id %q, and the question asked is %s", ErrNotBound, promptID, q.ID)
	}
	if sent == "" {
		return nil
	}
	switch {
	case nonce == nil:
		return fmt.Errorf(`%w: it carries no "nonce" (the one sent with %s; a bare value carries none: answer with an object holding it)`, ErrNotBound, q.ID)
	case *nonce != sent:
		return fmt.Errorf(`%w: its "nonce" is another question's, not the one sent with %s`, ErrNotBound, q.ID)
	}
	return nil
}

// AnsweredBy checks the third part of the rule alone: whether an answer
// from src may answer q. A person-only question takes a person's answer
// only; an answer that answers nothing (the policy, a timeout, end of
// input) is never refused here, since it grants nothing.
func (q Question) AnsweredBy(src Source) error {
	if !q.PersonOnly || src.Person() || !src.grants() {
		return nil
	}
	why := "it runs a program no sandbox confines"
	if q.HandsSecret {
		why = "it hands over a secret"
	}
	return fmt.Errorf("%w (%s): an answer from %s is not taken; a person answers it (terminal, JSONL, answers file, approver)", ErrPersonOnly, why, src)
}

// Person reports whether an answer from s is a person's: given at the
// terminal, on a JSONL line, in an answers file or AG-UI resume document
// (written for the question: consent entries match all it approves), or
// by an approver (a program or webhook that carries the question to a
// person). A hook, the default, session replay, the policy, a timeout and
// end of input are not.
func (s Source) Person() bool {
	switch s {
	case SourceTTY, SourceJSONL, SourceAnswers, SourceApprover:
		return true
	}
	return false
}

// grants reports whether an answer from s can be a yes: every source but
// those that say nobody answered.
func (s Source) grants() bool {
	switch s {
	case SourcePolicy, SourceTimeout, SourceEOF:
		return false
	}
	return true
}
