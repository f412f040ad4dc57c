package tty

import (
	"strings"
	"unicode/utf8"

	"github.com/AlecAivazis/survey/v2"
)

// secretPrompt asks for a secret as survey's Password does (nothing typed
// is echoed, a mask is drawn), but draws the question through survey's
// renderer, so that once answered the question is redrawn as its summary
// line (without "(Esc to dismiss)" and the other tags), as every other
// prompt is. survey's Password leaves the question line as it was drawn.
type secretPrompt struct {
	survey.Renderer
	Message string
}

func (p *secretPrompt) Prompt(cfg *survey.PromptConfig) (any, error) {
	err := p.Render(survey.PasswordQuestionTemplate, survey.PasswordTemplateData{
		Password: survey.Password{Message: p.Message},
		Config:   cfg,
	})
	if err != nil {
		return "", err
	}
	rr := p.NewRuneReader()
	_ = rr.SetTermMode()
	defer func() { _ = rr.RestoreTermMode() }()
	line, err := rr.ReadLine(cfg.HideCharacter)
	if err != nil {
		return "", err
	}
	// The line reader went to the next line on Enter: back to the
	// question's, which the next drawing replaces.
	p.NewCursor().Up(1)
	p.AppendRenderedText(mask(cfg, string(line)))
	return string(line), nil
}

// Cleanup draws the summary line: the message and the mask, never the
// secret.
func (p *secretPrompt) Cleanup(cfg *survey.PromptConfig, v any) error {
	typed, _ := v.(string)
	return p.show(cfg, mask(cfg, typed))
}

// show draws the question's summary line with shown as its answer.
func (p *secretPrompt) show(cfg *survey.PromptConfig, shown string) error {
	return p.Render(survey.InputQuestionTemplate, survey.InputTemplateData{
		Input:      survey.Input{Message: p.Message},
		ShowAnswer: true,
		Answer:     shown,
		Config:     cfg,
	})
}

func mask(cfg *survey.PromptConfig, typed string) string {
	return strings.Repeat(string(cfg.HideCharacter), utf8.RuneCountInString(typed))
}
