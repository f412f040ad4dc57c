package exec

import "context"

// Tool is something the model can call.
type Tool interface {
	Spec() ToolSpec
	Call(ctx context.Context, call ToolCall) (Result, error)
}

// Result is what a tool call gives back to the model. An error returned by
// Tool.Call (rather than a Result with IsError) is not for the model: it stops
// the run (infrastructure failure, a bad answer line, an unanswered question).
type Result struct {
	Text    string
	IsError bool
	// End, when set, ends the run after this call with the given outcome
	// (verdict, a cancelled AskUserQuestion). Later calls of the turn are not
	// run.
	End *Outcome
}

// Status is how a run ended, as reported in run.finished.
type Status string

const (
	StatusSuccess       Status = "success"
	StatusRejected      Status = "rejected"
	StatusCancelled     Status = "cancelled"
	StatusInputRequired Status = "input_required"
	StatusError         Status = "error"
	StatusInterrupted   Status = "interrupted"
)

// Outcome is how a run ended: the status and the text reported with it.
type Outcome struct {
	Status Status
	Text   string
}
