// Package exec is the agent loop: it sends the conversation to a Model, runs
// the Tools the model calls, and reports what happens as Events.
package exec

import (
	"context"
	"encoding/json"
)

// Role is who wrote a message of the conversation.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the conversation, in a provider-neutral shape.
// An assistant message may carry tool calls; a tool message answers one call.
type Message struct {
	Role       Role       `json:"role"`
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	IsError    bool       `json:"is_error,omitempty"`
	// Thinking holds provider reasoning blocks that must be sent back as they
	// came (Anthropic's signed thinking blocks).
	Thinking []Thinking `json:"thinking,omitempty"`
	// Agent is the agent whose model wrote an assistant message (its
	// model state is restored from it on resume).
	Agent string `json:"agent,omitempty"`
	// Handoff, on a handoff's result, is the agent the conversation went
	// on with (DESIGN §13): a resumed run continues with it.
	Handoff string `json:"handoff,omitempty"`
}

// Thinking is one reasoning block of an assistant turn. Signature is the
// provider's signature over Text; Redacted holds an encrypted block instead.
type Thinking struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
}

// ToolCall is one call the model asked for. Arguments is the raw JSON text the
// model produced; it may be invalid, and tools must treat it as untrusted.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Signature is a provider's opaque signature over the call, sent back
	// with it as it came (Gemini's thought signatures).
	Signature string `json:"signature,omitempty"`
}

// Usage counts tokens of one or more model turns.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Add sums u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens}
}

// ToolSpec is what the model is told about a tool. Parameters is a JSON Schema
// object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is everything a model needs for one assistant turn.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
	// Output, when set, is the shape the final answer must have (an
	// agent's structured_output): a provider that can constrain its
	// answer to a schema is asked to.
	Output *OutputFormat
}

// OutputFormat is a structured final answer: a JSON value fitting Schema.
type OutputFormat struct {
	Name        string
	Description string
	Schema      json.RawMessage
	Strict      bool
}

// Turn is one assistant turn: its message (Role is RoleAssistant) and the
// tokens it used.
type Turn struct {
	Message Message
	Usage   Usage
}

// Model produces one assistant turn from the conversation so far.
type Model interface {
	Turn(ctx context.Context, req Request) (Turn, error)
}

// toolCallJSON is how a tool call is stored (sessions): the arguments as the
// string the model wrote, which need not be valid JSON.
type toolCallJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Signature string `json:"signature,omitempty"`
}

func (c ToolCall) MarshalJSON() ([]byte, error) {
	return json.Marshal(toolCallJSON{c.ID, c.Name, string(c.Arguments), c.Signature})
}

func (c *ToolCall) UnmarshalJSON(data []byte) error {
	var j toolCallJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*c = ToolCall{ID: j.ID, Name: j.Name, Arguments: json.RawMessage(j.Arguments), Signature: j.Signature}
	return nil
}
