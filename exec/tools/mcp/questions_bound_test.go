package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hitl-dev/hitl/prompt"
)

// countingAsker accepts every question with "x" and counts them.
type countingAsker struct{ n int }

func (a *countingAsker) Ask(context.Context, prompt.Question) (prompt.Answer, error) {
	a.n++
	return prompt.Answer{Action: prompt.Accept, Content: []byte(`"x"`), Source: prompt.SourceAnswers}, nil
}

// A server that elicits in a loop gets at most MaxQuestionsPerCall questions
// asked in one call; the rest are declined without asking anyone.
func TestElicitationsPerCallAreBounded(t *testing.T) {
	asker := &countingAsker{}
	c := &Client{name: "loop", opts: Options{Asker: asker}}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	st := &callState{tool: "loop", callID: "c1", ctx: ctx, cancel: cancel, deadline: newDeadline(time.Hour, func() {})}
	p := &sdk.ElicitParams{Message: "Name?", RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
	}}
	declined := 0
	for range MaxQuestionsPerCall + 20 {
		res, err := c.answer(ctx, st, p, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Action == string(prompt.Decline) {
			declined++
		}
	}
	if asker.n != MaxQuestionsPerCall || declined != 20 {
		t.Errorf("asked %d, declined %d; want %d asked and 20 declined", asker.n, declined, MaxQuestionsPerCall)
	}
}
