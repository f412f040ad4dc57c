package tty

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/AlecAivazis/survey/v2"
	"github.com/AlecAivazis/survey/v2/core"
	"github.com/hitl-dev/hitl/prompt"
)

// Tall or wide text to approve (DESIGN §4): when the message had to be
// shortened to fit, a consent question first offers only "View the whole
// text" and the refusal; the approving options come once the person has
// paged through all of it. A person is never asked to approve what they
// could not have read.
const (
	viewLabel = "View the whole text"
	noLabel   = "No"
	nextLabel = "Next page"
	doneLabel = "Done: back to the question"
)

// shortened says whether q's message does not fit the terminal whole with
// reserve rows left (fit left lines or characters out).
func (s *session) shortened(q prompt.Question, reserve int, tags ...string) bool {
	if s.rows <= 0 || s.cols <= 0 {
		return false
	}
	lines := messageLines(q, tags...)
	return !slices.Equal(fit(lines, s.rows-reserve-1, s.cols), lines)
}

// refusal is the answer that refuses q, and whether q has one hitl knows:
// the option "no" of an approval or ask_confirmation, false for a yes/no.
func refusal(q prompt.Question) (prompt.Answer, bool) {
	switch {
	case q.Kind == prompt.KindConfirm:
		return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage("false")}, true
	case q.Kind == prompt.KindChoice && !q.Multiple:
		for _, o := range q.Options {
			if o.ID == "no" {
				content, _ := json.Marshal(o.ID)
				return prompt.Answer{Action: prompt.Accept, Content: content}, true
			}
		}
	}
	return prompt.Answer{}, false
}

// viewFirst gates a consent question whose text was shortened: it returns
// the refusal when the person picks No, or nil once they have viewed the
// whole text.
func (s *session) viewFirst(q prompt.Question, reserve int, tags []string) (*prompt.Answer, error) {
	if !isConsent(q) || (q.Kind != prompt.KindChoice && q.Kind != prompt.KindConfirm) || !s.shortened(q, reserve, tags...) {
		return nil, nil
	}
	msg := s.message(q, 4, tags...) + "\n  (the text is longer than the screen: view it whole before you can approve it)"
	no, ok := refusal(q)
	if !ok {
		// A remote user_choice: only the tool server knows which option
		// refuses; Esc dismisses (its default), else view it first.
		_, err := s.run(&survey.Select{Message: msg, Options: []string{viewLabel}}, nil, summaryMessage(q))
		if err != nil {
			return nil, err
		}
		return nil, s.page(q, tags)
	}
	// No is preselected: Enter out of habit refuses.
	v, err := s.run(&survey.Select{Message: msg, Options: []string{viewLabel, noLabel}, Default: noLabel}, nil, summaryMessage(q))
	if err != nil {
		return nil, err
	}
	if picked, _ := v.(core.OptionAnswer); picked.Value != viewLabel {
		return &no, nil
	}
	return nil, s.page(q, tags)
}

// page shows q's whole message, escaped, a screenful at a time.
func (s *session) page(q prompt.Question, tags []string) error {
	lines := messageLines(q, tags...)
	width := max(s.cols-indent, 10)
	room := max(s.rows-5, 3)
	var pages [][]string
	var cur []string
	used := 0
	for _, l := range lines {
		r := rowsOf(l, width)
		if used+r > room && len(cur) > 0 {
			pages = append(pages, cur)
			cur, used = nil, 0
		}
		cur = append(cur, l)
		used += r
	}
	pages = append(pages, cur)
	for i, p := range pages {
		opts := []string{nextLabel, doneLabel}
		if i == len(pages)-1 {
			opts = []string{doneLabel}
		}
		msg := fmt.Sprintf("(page %d of %d)\n  %s", i+1, len(pages), strings.Join(p, "\n  "))
		v, err := s.run(&survey.Select{Message: msg, Options: opts}, nil, fmt.Sprintf("(viewed page %d of %d)", i+1, len(pages)))
		if err != nil {
			return err
		}
		_ = v // Next page and Done both go on: every page is shown.
	}
	return nil
}
