package tty

import (
	"strings"

	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/hitl-dev/hitl/prompt"
)

// isConsent says whether q's answer can grant something (DESIGN §4
// "Consent questions"): it takes no key for its first moments on the
// screen, and its preselection is the refusal where hitl knows it.
func isConsent(q prompt.Question) bool { return q.Consent.IsConsent() }

// remoteChoice says whether q is a remote tool's user_choice: a consent
// choice whose default the tool server set (not the model), which is never
// replayed, and whose refusal hitl does not know.
func remoteChoice(q prompt.Question) bool {
	return q.Consent == prompt.ConsentChoice && q.Kind == prompt.KindChoice && !q.Multiple
}

// preselect is the option a single choice starts on:
//   - not consent: its default;
//   - hitl's own refusal as default (approvals, ask_confirmation): it;
//   - a remote user_choice: its default index, which Esc also sends;
//   - any other consent choice (a model's yes/no enum): the refusing
//     option, never the model's default; none when no option refuses.
func preselect(q prompt.Question) (int, bool) {
	if q.PreselectDefault() || remoteChoice(q) {
		return defaultIndex(q, q.Default)
	}
	for i, o := range q.Options {
		if refusing(o.ID) || refusing(o.Label) {
			return i, true
		}
	}
	return 0, false
}

// refusing says whether an option names a refusal.
func refusing(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "no", "n", "false", "deny", "reject", "cancel", "decline", "abort", "stop":
		return true
	}
	return false
}

// escSendsDefault replaces the dismiss tag of a remote user_choice: Esc
// dismisses it, and a dismissed user_choice sends its default (seed 000),
// so the person is told which.
func escSendsDefault(q prompt.Question, tags []string) []string {
	i, ok := defaultIndex(q, q.Default)
	if !ok {
		return tags
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if t == dismissTag {
			t = "(Esc: dismiss, sends the default: " + termtext.LineTerminal(q.Options[i].Label) + ")"
		}
		out = append(out, t)
	}
	return out
}
