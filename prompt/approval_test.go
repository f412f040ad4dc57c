package prompt

import "testing"

func TestApprovalQuestionIsNeverReplayed(t *testing.T) {
	// A session never answers an approval again: a command interrupted
	// before its result runs again only if a person approves it again.
	q := ApprovalQuestion("Run this command?", true)
	if q.Consent != ConsentApproval || q.Replayable() || q.Defaultable() || !q.StopsUnanswered() || !q.PreselectDefault() {
		t.Fatalf("approval question flags: %+v", q)
	}
}
