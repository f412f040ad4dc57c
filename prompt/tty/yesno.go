package tty

import (
	"fmt"
	"strings"

	"github.com/AlecAivazis/survey/v2"
	"github.com/hitl-dev/hitl/internal/termtext"
)

// yesNoPrompt is survey's Confirm, except that a reply that is neither yes
// nor no is refused through survey's validation, as any other prompt's
// reply is, so that its refusal line is taken down once the question is
// answered (configSpy). survey's Confirm draws that refusal itself, where
// nothing can take it down.
type yesNoPrompt struct{ survey.Confirm }

func (p *yesNoPrompt) Prompt(cfg *survey.PromptConfig) (any, error) {
	if err := p.Render(survey.ConfirmQuestionTemplate, survey.ConfirmTemplateData{Confirm: p.Confirm, Config: cfg}); err != nil {
		return "", err
	}
	rr := p.NewRuneReader()
	_ = rr.SetTermMode()
	defer func() { _ = rr.RestoreTermMode() }()
	line, err := rr.ReadLine(0)
	if err != nil {
		return "", err
	}
	// The line reader went to the next line on Enter: back to the
	// question's, which the next drawing replaces.
	p.NewCursor().PreviousLine(1)
	return string(line), nil
}

// Cleanup draws the summary line with the reply as Yes or No.
func (p *yesNoPrompt) Cleanup(cfg *survey.PromptConfig, v any) error {
	yes, err := p.parse(v)
	if err != nil {
		return err
	}
	return p.Confirm.Cleanup(cfg, yes)
}

// parse reads a reply as survey's Confirm does: y, yes, n or no, in any
// case; nothing typed is the default.
func (p *yesNoPrompt) parse(v any) (bool, error) {
	typed, _ := v.(string)
	switch strings.ToLower(typed) {
	case "y", "yes":
		return true, nil
	case "n", "no":
		return false, nil
	case "":
		return p.Default, nil
	}
	return false, fmt.Errorf("%s is not a valid answer: type y or n", termtext.LineTerminal(fmt.Sprintf("%q", typed)))
}
