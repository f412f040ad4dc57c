package prompt

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The life of a secret answer, in one place (DESIGN §5): Secrets gives out
// the placeholder and masks the value (secrets.go); Asker puts the
// placeholder in the answer; SecretNote tells the model where the value
// went; SecretRecords is what a session journal keeps (never the value);
// and on resume Reserve and Reask give the model's placeholders their
// values again.

// SecretRecord is a secret question answered: the question (never the
// value) and the placeholder number the model holds for it. A session
// journal keeps these, so a resumed run asks them again.
type SecretRecord struct {
	N        int      `json:"n"`
	Question Question `json:"question"`
}

// HasSecret reports whether q is secret or a form with a secret field.
func HasSecret(q Question) bool {
	if q.Secret {
		return true
	}
	for _, f := range q.Fields {
		if f.Question.Secret {
			return true
		}
	}
	return false
}

// SecretRecords are the secret questions of an accepted answer a (as the
// Asker returned it: placeholders in place of values), with their
// placeholder numbers: the question itself, or each secret field of a form
// as a question of its own.
func SecretRecords(q Question, a Answer) []SecretRecord {
	if a.Action != Accept {
		return nil
	}
	var out []SecretRecord
	add := func(sq Question, content json.RawMessage) {
		var p string
		if json.Unmarshal(content, &p) != nil {
			return
		}
		if n := PlaceholderNumber(p); n > 0 {
			sq.SecretSlot = 0
			out = append(out, SecretRecord{N: n, Question: sq})
		}
	}
	if q.Secret {
		add(q, a.Content)
		return out
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(a.Content, &fields) != nil {
		return nil
	}
	for _, f := range q.Fields {
		if f.Question.Secret {
			fq := f.Question
			fq.CallID, fq.Tool, fq.Secret = q.CallID, q.Tool, true
			fq.Message = q.Message + ": " + fq.Message
			add(fq, fields[f.Name])
		}
	}
	return out
}

// SecretNote tells the model where the secret values of an accepted
// answer's content went ("" when it holds none).
func SecretNote(q Question, content json.RawMessage) string {
	if q.Secret {
		var p string
		_ = json.Unmarshal(content, &p)
		return fmt.Sprintf("the value is secret and was not shown to you; it is available to shell commands as %s", strings.TrimPrefix(p, "$"))
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(content, &fields)
	var names []string
	for _, f := range q.Fields {
		var p string
		if f.Question.Secret && json.Unmarshal(fields[f.Name], &p) == nil && p != "" {
			names = append(names, fmt.Sprintf("%s as %s", f.Name, strings.TrimPrefix(p, "$")))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "secret fields were not shown to you; they are available to shell commands: " + strings.Join(names, ", ")
}

// ReserveSeen reserves the highest placeholder in texts (the tool results
// of a resumed conversation): a secret answered before the run stopped
// must never lend its number to one asked after the resume, or a command
// written for one would get the other.
func (s *Secrets) ReserveSeen(texts []string) {
	lost := 0
	for _, t := range texts {
		lost = max(lost, MaxPlaceholder(t))
	}
	s.Reserve(lost)
}

// Reask asks again, through asker, the secret questions recorded before a
// run stopped (a session never keeps their values), so $HITL_SECRET_<n>
// means in the resumed run what it meant to the model. results are the
// tool results by call id. They are asked under ids s<n>. Only a secret
// whose placeholder is in its call's result is asked: the model never saw
// the others (the pending calls run again and ask anew; a call cut off by
// a second Ctrl-C after its answer left a record whose number may since
// name another secret). A secret not given again is said on notices.
func (s *Secrets) Reask(ctx context.Context, asker *Asker, records []SecretRecord, results map[string]string, notices io.Writer) error {
	seen := map[int]bool{}
	for _, sq := range records {
		if seen[sq.N] || !HasPlaceholder(results[sq.Question.CallID], sq.N) {
			continue
		}
		seen[sq.N] = true
		q := sq.Question
		q.ID, q.SecretSlot, q.Index, q.Count = fmt.Sprintf("s%d", sq.N), sq.N, 0, 1
		again := fmt.Sprintf("asked again after the resume: secret answers are never kept in a session (this is HITL_SECRET_%d)", sq.N)
		if q.Hint == "" {
			q.Hint = again
		} else {
			// the schema's description may be all that says which secret
			q.Hint += " (" + again + ")"
		}
		ans, err := asker.Ask(ctx, q)
		if err != nil {
			return err
		}
		if ans.Action != Accept && notices != nil {
			why := "the question was dismissed"
			switch {
			case ans.Unanswered():
				why = "nobody answered"
			case ans.Action == Decline:
				why = "the question was declined"
			}
			fmt.Fprintf(notices, "hitl: HITL_SECRET_%d stays unset in this run (%s)\n", sq.N, why)
		}
	}
	return nil
}
