package prompt

import "encoding/json"

// Consent is the kind of consent a question asks for (DESIGN §4 "Consent
// questions", "Approvals with nobody to ask", §5 "Unanswered"). Everything
// hitl does differently for consent — defaulting, stopping, replaying,
// preselecting on a terminal — is derived from it in rules, and nowhere
// else.
type Consent int

const (
	// ConsentNone is an ordinary question: its default may answer it
	// under --unanswered default, and a terminal preselects it.
	ConsentNone Consent = iota
	// ConsentConfirm is a yes/no question by its schema (a boolean, a
	// yes/no enum, a form with such a field; see SchemaConsent): its default
	// was written by the model, so it is never used nor preselected.
	ConsentConfirm
	// ConsentConfirmNo is a confirmation whose default no model wrote:
	// hitl's own refusal (ask_confirmation's "no"), or the invoking
	// person's (hitl ask --default). Never defaulted when nobody answers,
	// and preselected on a terminal (for a refusal, a stray Enter refuses).
	ConsentConfirmNo
	// ConsentApproval is a shell or tool approval (ApprovalQuestion):
	// never defaulted, never replayed from a session (approved again by a
	// person on resume), its refusing "no" preselected; with nobody to ask
	// it stops the run under --unanswered stop, and is refused with
	// "nobody was available to approve" under cancel or default.
	ConsentApproval
	// ConsentChoice is a remote user_choice: never defaulted, never
	// replayed (seed 000); with nobody to ask it stops the run under
	// --unanswered stop, and is abandoned (nothing POSTed) otherwise. Its
	// labels mean something only to the tool server, so hitl knows no
	// refusing option and a terminal preselects none.
	ConsentChoice
	// ConsentFollowUp is not consent but an optional follow-up to a consent
	// answer (ask_confirmation's notes after "no"): the consent stands
	// whatever happens, so nobody answering it never stops the run.
	ConsentFollowUp
)

// rules is what a kind of consent implies; the one switch.
type rules struct {
	consent   bool // the answer can grant something
	defaulted bool // --unanswered default may answer with the question's default
	stops     bool // --unanswered stop stops the run when nobody answers
	replayed  bool // an answer recorded in a session may answer it on resume
	preselect bool // a terminal may preselect the question's default
}

func (c Consent) rules() rules {
	switch c {
	case ConsentNone:
		return rules{defaulted: true, stops: true, replayed: true, preselect: true}
	case ConsentConfirm:
		return rules{consent: true, stops: true, replayed: true}
	case ConsentConfirmNo:
		return rules{consent: true, stops: true, replayed: true, preselect: true}
	case ConsentApproval:
		return rules{consent: true, stops: true, preselect: true}
	case ConsentChoice:
		return rules{consent: true, stops: true}
	case ConsentFollowUp:
		return rules{defaulted: true, replayed: true, preselect: true}
	}
	// An unknown kind fails closed: consent, never defaulted, replayed
	// or preselected.
	return rules{consent: true, stops: true}
}

// IsConsent reports whether an answer to a question of this kind can grant
// something.
func (c Consent) IsConsent() bool { return c.rules().consent }

// Defaultable reports whether q's default may answer it when nobody did
// (--unanswered default): never for a default the model wrote, consent, a confirm question, a form
// with a consent field, or a default that holds a yes or a no (a boolean
// or a yes/no word anywhere in it), whatever the schema around it.
func (q Question) Defaultable() bool {
	if q.ModelDefault {
		// No list of yes-words recognises every way to say yes.
		return false
	}
	if !q.Consent.rules().defaulted || q.Kind == KindConfirm || holdsYesNo(q.Default) {
		return false
	}
	for _, f := range q.Fields {
		if !f.Question.Defaultable() {
			return false
		}
	}
	return true
}

// StopsUnanswered reports whether --unanswered stop stops the run when
// nobody answers q; when false, q is cancelled at once.
func (q Question) StopsUnanswered() bool { return q.Consent.rules().stops }

// Replayable reports whether an answer recorded in a session may answer q
// on resume.
func (q Question) Replayable() bool { return q.Consent.rules().replayed }

// PreselectDefault reports whether a terminal may preselect q's default;
// when false it starts on the first option (a confirm on "no").
func (q Question) PreselectDefault() bool { return q.Consent.rules().preselect }

// holdsYesNo reports whether a JSON value holds a boolean or a yes/no word
// anywhere in it. Text that is not JSON counts (fail closed).
func holdsYesNo(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return true
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		default:
			return yesNoValue(x)
		}
		return false
	}
	return walk(v)
}

// withOptionConsent makes a choice whose options say yes or no (an id or a
// label that is a yes/no word: AskUserQuestion's "Yes"/"No", ask_question's
// "approve") a consent question, whichever dialect asked it: its options
// are a string enum holding a yes/no word (DESIGN §4).
func withOptionConsent(q Question) Question {
	if q.Consent != ConsentNone || q.Kind != KindChoice {
		return q
	}
	for _, o := range q.Options {
		if YesNoWord(o.ID) || YesNoWord(o.Label) {
			q.Consent = ConsentConfirm
			return q
		}
	}
	return q
}
