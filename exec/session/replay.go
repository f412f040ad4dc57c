package session

// Replaying the answers a journal recorded, on resume.

import (
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// Replay answers the questions of the pending calls that were answered before
// the run stopped, so a resumed call does not ask them again.
type Replay struct {
	answers map[string]map[int]prompt.Answer
	ids     map[string]map[int]string
}

// NewReplay replays the answers recorded for calls.
func NewReplay(l *Loaded, calls []exec.ToolCall) *Replay {
	r := &Replay{answers: map[string]map[int]prompt.Answer{}, ids: map[string]map[int]string{}}
	for _, c := range calls {
		if a, ok := l.Answers[c.ID]; ok {
			r.answers[c.ID] = a
			r.ids[c.ID] = l.AnswerIDs[c.ID]
		}
	}
	return r
}

// Answer returns the recorded answer of q's call and index, once, when it
// was recorded for the question of q's id: the pending calls ask their
// questions again under the ids they had (NextPrompt), so an answer
// recorded for another question of the call at that index (an approval
// before an MCP elicitation, both index 0) never answers q.
func (r *Replay) Answer(q prompt.Question) (prompt.Answer, bool, error) {
	if !q.Replayable() {
		return prompt.Answer{}, false, nil
	}
	a, ok := r.answers[q.CallID][q.Index]
	if !ok {
		return prompt.Answer{}, false, nil
	}
	if id := r.ids[q.CallID][q.Index]; id != "" && id != q.ID {
		return prompt.Answer{}, false, nil
	}
	delete(r.answers[q.CallID], q.Index)
	a.Source = prompt.SourceSession
	return a, true, nil
}

// NextPrompt is the question counter to resume with: the pending calls ask
// their questions again under the ids they had.
func (l *Loaded) NextPrompt(calls []exec.ToolCall) int {
	first := 0
	for _, c := range calls {
		if n, ok := l.FirstPrompt[c.ID]; ok && (first == 0 || n < first) {
			first = n
		}
	}
	if first > 0 {
		return first - 1
	}
	return l.LastPrompt
}
