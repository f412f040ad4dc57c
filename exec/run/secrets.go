package run

import (
	"github.com/hitl-dev/hitl/exec"
)

// A run's secrets live in its prompt.Secrets (prompt/secretlife.go has the
// whole life of a secret answer). On resume the run gives it the tool
// results of the conversation, to reserve the placeholders the model
// holds and ask their questions again.

// toolResults are the tool results of msgs, as texts and by call id.
func toolResults(msgs []exec.Message) ([]string, map[string]string) {
	var texts []string
	byCall := map[string]string{}
	for _, m := range msgs {
		if m.Role == exec.RoleTool {
			texts = append(texts, m.Text)
			byCall[m.ToolCallID] = m.Text
		}
	}
	return texts, byCall
}
