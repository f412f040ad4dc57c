package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// An AG-UI resume document answers the interrupts a stopped run listed
// (run.finished.interrupts) by their ids:
//
//	{"resume":[{"interruptId":"p1","status":"resolved","payload":"once"}]}
//
// status resolved accepts with payload as the content; cancelled cancels.
// The consent rules hold: a payload that is an index never answers a
// choice (name the option).
type resumeDocument struct {
	Resume []resumeEntry `json:"resume"`
}

type resumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload"`
}

func isResumeDocument(data []byte) bool {
	data = bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if !bytes.HasPrefix(data, []byte("{")) {
		return false
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) != nil {
		return false
	}
	_, ok := probe["resume"]
	return ok
}

func (f *AnswersFile) parseResume(data []byte) error {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	// Read once, as an answer line is: a key given twice, or beside its
	// case twin ("payload" and "PAYLOAD"), is refused, never one of them
	// picked.
	if err := ValidLine(bytes.TrimSpace(data)); err != nil {
		return &BadAnswerError{Where: f.path, Reason: "not an AG-UI resume document: " + err.Error()}
	}
	f.resume = true
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var doc resumeDocument
	if err := d.Decode(&doc); err != nil {
		return &BadAnswerError{Where: f.path, Reason: "not an AG-UI resume document ({\"resume\":[{\"interruptId\",\"status\",\"payload\"}]}): " + err.Error()}
	}
	seen := map[string]bool{}
	for i, e := range doc.Resume {
		where := fmt.Sprintf("%s: resume[%d]", f.path, i)
		if e.InterruptID == "" {
			return &BadAnswerError{Where: where, Reason: `no "interruptId": name the interrupt it answers (run.finished.interrupts[].id)`}
		}
		if seen[e.InterruptID] {
			return &BadAnswerError{Where: where, Reason: fmt.Sprintf("interrupt %s is answered twice", e.InterruptID)}
		}
		seen[e.InterruptID] = true
		a := Answer{Source: SourceAnswers}
		switch e.Status {
		case "resolved", "":
			if len(e.Payload) == 0 || string(e.Payload) == "null" {
				return &BadAnswerError{Where: where, Reason: `status resolved needs a "payload": the answer`}
			}
			a.Action, a.Content = Accept, e.Payload
		case "cancelled":
			a.Action = Cancel
		default:
			return &BadAnswerError{Where: where, Reason: fmt.Sprintf("status %q: expected resolved or cancelled", e.Status)}
		}
		f.entries = append(f.entries, &answerEntry{where: where, promptID: e.InterruptID, answer: a})
	}
	return nil
}

// Resume says whether the file is an AG-UI resume document. Its entries
// name questions by id only, which every run numbers from p1 again: it
// answers a stopped run's interrupts (hitl resume), never a fresh run's
// questions, whose p1 nobody has seen yet.
func (f *AnswersFile) Resume() bool { return f.resume }

// NotResuming is the error for a resume document given where no stopped
// run is resumed (hitl exec, hitl ask, hitl mcp).
func (f *AnswersFile) NotResuming() error {
	return &BadAnswerError{Where: f.path, Reason: "an AG-UI resume document answers the interrupts of a stopped run by their ids, which every run numbers p1, p2, ... again: only hitl resume takes it; for a new run, write an answers file whose entries match each question's text"}
}
