// Package interaction is the interaction toolset (seed 003): two tools,
// ask_confirmation (a yes / no / no-with-feedback gate before a mutating
// action) and ask_question (an open question with optional choices). Free
// text is always allowed. Both return the seed's InteractionResponse:
//
//	{"interaction_id", "selected_option_id", "free_text", "confirmed", "cancelled"}
//
// interaction_id is the tool call's id (call_id in the events), so it is
// the same when a stopped run is resumed and the call asked again.
package interaction

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// The fixed options of ask_confirmation (seed 003).
const (
	Yes            = "yes"
	No             = "no"
	NoWithFeedback = "no_with_feedback"
)

// ConfirmationOptions returns ask_confirmation's options, in the order they
// are shown: the approving one last, so that a terminal's first highlighted
// option, taken by an Enter out of habit, is a "no" (DESIGN §1: no silent
// consent). Answers name options by id, so the order is only for people.
func ConfirmationOptions() []prompt.Option {
	return []prompt.Option{
		{ID: No, Label: "No"},
		{ID: NoWithFeedback, Label: "No — tell me what to change"},
		{ID: Yes, Label: "Yes"},
	}
}

// New returns the toolset's two tools. The toolset takes no name: (it gives
// two tools); the names are the seed's.
func New(asker prompt.Questioner) []exec.Tool {
	return []exec.Tool{&Confirmation{asker: asker}, &Question{asker: asker}}
}

// Response is the seed's InteractionResponse, as the model receives it.
// Absent values are null, as the seed's Option fields serialize.
type Response struct {
	InteractionID    string  `json:"interaction_id"`
	SelectedOptionID *string `json:"selected_option_id"`
	FreeText         *string `json:"free_text"`
	Confirmed        *bool   `json:"confirmed"`
	Cancelled        bool    `json:"cancelled"`
	// Metadata is the seed's extension data; hitl sets
	// {"unanswered": true} when nobody answered (as opposed to a person
	// dismissing the question).
	Metadata map[string]any `json:"metadata,omitempty"`
}

func (r Response) result() (exec.Result, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return exec.Result{}, fmt.Errorf("encoding the interaction response: %w", err)
	}
	return exec.Result{Text: string(data)}, nil
}

// Confirmation is ask_confirmation.
type Confirmation struct{ asker prompt.Questioner }

const confirmationParameters = `{"type":"object","properties":{
"question":{"type":"string","description":"The approval question shown to the user."},
"target_tool":{"type":"string","description":"Name of the tool that will be called if approved (informational)."}},
"required":["question"]}`

// AsksPerson: a call's arguments are the question (exec.Asking).
func (t *Confirmation) AsksPerson() bool { return true }

func (t *Confirmation) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name: "ask_confirmation",
		Description: "A mandatory safety gate for mutating operations: call this before any create, update, delete or deploy action " +
			`and go on only when "confirmed" is true. The user picks "yes", "no" or "no_with_feedback" (revision notes in free_text). ` +
			`The result is {"interaction_id", "selected_option_id", "free_text", "confirmed", "cancelled"}.`,
		Parameters: json.RawMessage(confirmationParameters),
	}
}

type confirmationArgs struct {
	Question   string `json:"question"`
	TargetTool string `json:"target_tool"`
}

// Call asks for confirmation. Its default is no, and a consent question is
// never defaulted: unanswered, it is cancelled.
func (t *Confirmation) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a confirmationArgs
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return errorResult("invalid arguments: %v", err), nil
	}
	if strings.TrimSpace(a.Question) == "" {
		return errorResult("ask_confirmation was not asked: question is empty; give the approval question"), nil
	}
	q := prompt.Question{
		CallID:  call.ID,
		Tool:    "ask_confirmation",
		Kind:    prompt.KindChoice,
		Message: a.Question,
		Options: ConfirmationOptions(),
		Custom:  true, // free text is the feedback of no_with_feedback
		Default: json.RawMessage(`"` + No + `"`),
		Consent: prompt.ConsentConfirmNo, // "no" is preselected on a terminal: Enter refuses
	}
	if a.TargetTool != "" {
		q.Hint = "If approved, the agent calls " + a.TargetTool + "."
	}
	ans, err := t.asker.Ask(ctx, q)
	if err != nil {
		return exec.Result{}, err
	}
	r := Response{InteractionID: call.ID, Confirmed: ptr(false)}
	switch ans.Action {
	case prompt.Accept:
		id := NoWithFeedback // free text is feedback: a "no" with notes
		if ans.Text != "" {
			r.FreeText = ptr(ans.Text)
		} else if err := json.Unmarshal(ans.Content, &id); err != nil {
			return exec.Result{}, fmt.Errorf("ask_confirmation: the answer is not an option id: %s", ans.Content)
		}
		if id == NoWithFeedback && r.FreeText == nil {
			if r.FreeText, err = t.feedback(ctx, q); err != nil {
				return exec.Result{}, err
			}
		}
		r.SelectedOptionID = ptr(id)
		r.Confirmed = ptr(id == Yes)
	case prompt.Decline:
	default:
		r.Cancelled = true
		r.Metadata = unanswered(ans)
	}
	return r.result()
}

// FeedbackMessage is the follow-up question of no_with_feedback chosen
// without text.
const FeedbackMessage = "What should change?"

// feedback asks for the notes of a no_with_feedback chosen as an option (a
// person picking "No — tell me what to change" on the terminal). The "no"
// stands whatever happens: the follow-up never stops the run, and declined,
// dismissed or unanswered it leaves free_text null.
func (t *Confirmation) feedback(ctx context.Context, confirm prompt.Question) (*string, error) {
	q := prompt.Question{
		CallID:  confirm.CallID,
		Tool:    confirm.Tool,
		Index:   1,
		Count:   2,
		Kind:    prompt.KindText,
		Message: FeedbackMessage,
		Hint:    "You answered no to: " + confirm.Message,
		Consent: prompt.ConsentFollowUp,
	}
	ans, err := t.asker.Ask(ctx, q)
	if err != nil || ans.Action != prompt.Accept {
		return nil, err
	}
	var s string
	if err := json.Unmarshal(ans.Content, &s); err != nil {
		return nil, fmt.Errorf("ask_confirmation: the feedback is not a string: %s", ans.Content)
	}
	if s == "" {
		return nil, nil
	}
	return &s, nil
}

// Question is ask_question.
type Question struct{ asker prompt.Questioner }

const questionParameters = `{"type":"object","properties":{
"question":{"type":"string","description":"The question to present."},
"options":{"type":"array","description":"Structured choices; the user can always type freely instead.","items":{"type":"object","properties":{
 "id":{"type":"string","description":"Stable identifier returned in selected_option_id."},
 "label":{"type":"string","description":"Display text."},
 "description":{"type":"string","description":"Clarifying text below the label."}},
 "required":["id","label"]}}},
"required":["question"]}`

// AsksPerson: a call's arguments are the question (exec.Asking).
func (t *Question) AsksPerson() bool { return true }

func (t *Question) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name: "ask_question",
		Description: "Ask the user an open-ended question with optional structured choices; the user can always type freely. " +
			`The result is {"interaction_id", "selected_option_id", "free_text", "confirmed", "cancelled"}: ` +
			"the chosen option's id in selected_option_id, or the typed answer in free_text; cancelled is true if the user dismissed it.",
		Parameters: json.RawMessage(questionParameters),
	}
}

type questionArgs struct {
	Question string          `json:"question"`
	Options  []prompt.Option `json:"options"`
}

// Call asks the question. Declined or dismissed, it is cancelled.
func (t *Question) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a questionArgs
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return errorResult("invalid arguments: %v", err), nil
	}
	q, problem := askQuestion(call.ID, a)
	if problem != "" {
		return errorResult("ask_question was not asked: %s", problem), nil
	}
	ans, err := t.asker.Ask(ctx, q)
	if err != nil {
		return exec.Result{}, err
	}
	r := Response{InteractionID: call.ID}
	if ans.Action != prompt.Accept {
		r.Cancelled = true
		r.Metadata = unanswered(ans)
		return r.result()
	}
	var s string
	switch {
	case ans.Text != "":
		r.FreeText = ptr(ans.Text)
	case json.Unmarshal(ans.Content, &s) != nil:
		return exec.Result{}, fmt.Errorf("ask_question: the answer is not a string: %s", ans.Content)
	case q.Kind == prompt.KindText:
		r.FreeText = ptr(s) // a text question's answer is its content
	default:
		r.SelectedOptionID = ptr(s)
	}
	return r.result()
}

// askQuestion builds the canonical question: a text question without
// options, else a choice with free text allowed.
func askQuestion(callID string, a questionArgs) (prompt.Question, string) {
	q := prompt.Question{CallID: callID, Tool: "ask_question", Kind: prompt.KindText, Message: a.Question}
	if strings.TrimSpace(a.Question) == "" {
		return q, "question is empty; give the question to ask"
	}
	if len(a.Options) == 0 {
		return q, ""
	}
	seen := map[string]int{}
	for i, o := range a.Options {
		if strings.TrimSpace(o.ID) == "" {
			return q, fmt.Sprintf("options[%d].id is empty; every option needs a stable id", i)
		}
		if j, dup := seen[o.ID]; dup {
			return q, fmt.Sprintf("options[%d].id %q repeats options[%d].id; ids must be unique", i, o.ID, j)
		}
		seen[o.ID] = i
		if strings.TrimSpace(o.Label) == "" {
			o.Label = o.ID
		}
		q.Options = append(q.Options, o)
	}
	q.Kind = prompt.KindChoice
	q.Custom = true // seed 003: allow_free_text is always true
	return q, ""
}

// unanswered is the response metadata telling the model that nobody
// answered, as opposed to a person dismissing the question.
func unanswered(ans prompt.Answer) map[string]any {
	if ans.Unanswered() {
		return map[string]any{"unanswered": true}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func errorResult(format string, args ...any) exec.Result {
	return exec.Result{IsError: true, Text: fmt.Sprintf(format, args...)}
}
