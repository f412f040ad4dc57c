// Package receipt keeps a record of who approved what (DESIGN §14): every
// answer to a consent question becomes a receipt in the session journal,
// chained to the one before by its hash, and signed — when the run has a
// key — as an SSH signature (SSHSIG, namespace hitl-receipt) that
// `ssh-keygen -Y verify` checks.
package receipt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/hitl-dev/hitl/prompt"
)

// Namespace is the SSHSIG namespace of a receipt's signature.
const Namespace = "hitl-receipt"

// Receipt is one consent answer.
type Receipt struct {
	Seq      int    `json:"seq"`
	RunID    string `json:"run_id"`
	Time     string `json:"time"`
	PromptID string `json:"prompt_id"`
	CallID   string `json:"call_id,omitempty"`
	Agent    string `json:"agent,omitempty"`
	// Tool is the tool approved or the asking tool; Subject the exact text
	// approved (the command line, the call shown, the question); Cwd where
	// a command runs; SubjectSHA256 their hash (tool, NUL, subject, NUL,
	// cwd).
	Tool          string `json:"tool"`
	Subject       string `json:"subject"`
	Cwd           string `json:"cwd,omitempty"`
	SubjectSHA256 string `json:"subject_sha256"`
	// Action and Content are the decision; Source where it came from
	// (tty, jsonl, answers, approver, ...); Who who gave it.
	Action  prompt.Action   `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
	Source  prompt.Source   `json:"source"`
	Who     string          `json:"who"`
	// Prev is the SHA-256 of the previous receipt's bytes ("" for the
	// first of the run).
	Prev string `json:"prev"`
}

// Signed is a receipt as the journal keeps it: the exact bytes (what is
// hashed and signed) and the armored signature ("" when unsigned).
type Signed struct {
	Raw       json.RawMessage `json:"receipt"`
	Signature string          `json:"signature,omitempty"`
}

// Hash is the hex SHA-256 of raw.
func Hash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// SubjectHash hashes what was approved.
func SubjectHash(tool, subject, cwd string) string {
	return Hash([]byte(tool + "\x00" + subject + "\x00" + cwd))
}

// Writer makes the receipts of a run, one per consent answer, in order.
type Writer struct {
	RunID string
	// Signer signs each receipt (nil: unsigned).
	Signer ssh.Signer
	// Who says who gave an answer (by its source).
	Who func(q prompt.Question, a prompt.Answer) string
	// Record keeps a receipt (the journal).
	Record func(Signed)
	// Failed is told of a receipt that could not be signed.
	Failed func(error)

	mu   sync.Mutex
	seq  int
	prev string
}

// Continue sets where the chain goes on (a resumed run): the last receipt
// kept.
func (w *Writer) Continue(last []Signed) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(last); n > 0 {
		w.seq = n
		w.prev = Hash(last[n-1].Raw)
	}
}

// Requested implements prompt.Observer.
func (w *Writer) Requested(prompt.Question) {}

// Answered implements prompt.Observer: a consent answer becomes a receipt.
func (w *Writer) Answered(q prompt.Question, a prompt.Answer) {
	if !q.Consent.IsConsent() {
		return
	}
	subject := q.Subject
	if subject == "" {
		subject = q.Message
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	r := Receipt{
		Seq: w.seq, RunID: w.RunID, Time: time.Now().UTC().Format(time.RFC3339Nano),
		PromptID: q.ID, CallID: q.CallID, Agent: q.Agent,
		Tool: q.Tool, Subject: subject, Cwd: q.Dir, SubjectSHA256: SubjectHash(q.Tool, subject, q.Dir),
		Action: a.Action, Content: a.Content, Source: a.Source, Prev: w.prev,
	}
	if q.Secret {
		r.Content = json.RawMessage(`"***"`)
	}
	if w.Who != nil {
		r.Who = w.Who(q, a)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return
	}
	s := Signed{Raw: raw}
	if w.Signer != nil {
		sig, err := sshsig.Sign(bytes.NewReader(raw), w.Signer, sshsig.HashSHA512, Namespace)
		if err != nil {
			if w.Failed != nil {
				w.Failed(fmt.Errorf("receipt %d could not be signed: %w", r.Seq, err))
			}
		} else {
			s.Signature = string(sshsig.Armor(sig))
		}
	}
	w.prev = Hash(raw)
	if w.Record != nil {
		w.Record(s)
	}
}
