// Package anthropic is the model provider for Anthropic's Messages API, built
// on github.com/anthropics/anthropic-sdk-go.
//
// Each turn is one streamed request, accumulated (text, thinking, tool
// calls, usage) as its events arrive and returned only after message_stop,
// so a stream cut mid-way is retried as a whole turn. What is accumulated is
// counted: past the configured bound (provider.Config.MaxTurn) the turn
// fails at once with a *provider.TooLargeError and the stream is closed. thinking_budget turns on extended
// thinking (a number is budget_tokens; minimal/low/medium/high are 1024,
// 2048, 8192 and 16384 tokens); the signed thinking blocks of each assistant
// turn are kept in exec.Message.Thinking and sent back as they came, as the
// API requires with tool use. max_tokens defaults to DefaultMaxTokens, or to
// the thinking budget plus DefaultMaxTokens when thinking is on; temperature
// is not sent with thinking (the API refuses it).
//
// The SDK is used without its environment defaults (no ANTHROPIC_API_KEY,
// ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL or profile is read by it): the key
// and base URL are only those resolved by the model package.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model/cassette"
	"github.com/hitl-dev/hitl/exec/model/internal/provider"
)

// DefaultMaxTokens is max_tokens when the model sets none.
const DefaultMaxTokens = 8192

// Model is an Anthropic Messages model.
type Model struct {
	cfg       provider.Config
	svc       sdk.MessageService
	maxTokens int64
	thinking  int64 // budget tokens; 0: off
	attempts  atomic.Int32
}

// InterleavedThinkingBeta is the anthropic-beta value provider_opts
// interleaved_thinking sends.
const InterleavedThinkingBeta = "interleaved-thinking-2025-05-14"

// EffortTokens maps an effort word to thinking budget tokens.
var EffortTokens = map[string]int64{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}

// New returns the model c describes.
func New(c provider.Config) (*Model, error) {
	m := &Model{cfg: c}
	cm := c.Model
	if tb := cm.ThinkingBudget; tb != nil {
		m.thinking = tb.Tokens
		if tb.Effort != "" {
			t, ok := EffortTokens[tb.Effort]
			if !ok {
				return nil, fmt.Errorf("model %s: thinking_budget %q: want a number of tokens or one of minimal, low, medium, high", cm.Name, tb.Effort)
			}
			m.thinking = t
		}
		if m.thinking > 0 && m.thinking < 1024 {
			return nil, fmt.Errorf("model %s: thinking_budget %d: Anthropic needs at least 1024 tokens", cm.Name, m.thinking)
		}
	}
	switch {
	case cm.MaxTokens != nil:
		m.maxTokens = *cm.MaxTokens
		if m.thinking > 0 && m.maxTokens <= m.thinking {
			return nil, fmt.Errorf("model %s: max_tokens (%d) must be greater than thinking_budget (%d)", cm.Name, m.maxTokens, m.thinking)
		}
	case m.thinking > 0:
		m.maxTokens = m.thinking + DefaultMaxTokens
	default:
		m.maxTokens = DefaultMaxTokens
	}

	cap := c.RetryDelayCap()
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
		option.WithBaseURL(c.BaseURL),
		option.WithHTTPClient(c.HTTPClient),
		option.WithMaxRetries(c.Retries()),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			m.attempts.Add(1)
			res, err := next(r)
			// Bound the server-directed wait: past the cap, give up at once
			// (the SDK would otherwise sleep as long as it is told).
			if d, ok := provider.RetryAfter(res); ok && d > cap {
				res.Header.Set("X-Should-Retry", "false")
			}
			// An error status the SDK does not retry is not retried when its
			// body cannot be read either (it passed MaxErrorBody): the SDK
			// would take that for a dropped connection.
			if res != nil && res.StatusCode >= 400 && res.StatusCode < 500 && res.Header.Get("X-Should-Retry") == "" {
				switch res.StatusCode {
				case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
				default:
					res.Header.Set("X-Should-Retry", "false")
				}
			}
			return res, err
		}),
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	if cm.ProviderOpts.InterleavedThinking {
		// provider_opts interleaved_thinking: tool calls between thinking
		// blocks (Anthropic's beta, as cagent asks for it).
		opts = append(opts, option.WithHeaderAdd("anthropic-beta", InterleavedThinkingBeta))
	}
	// NewMessageService, unlike NewClient, reads nothing from the
	// environment.
	m.svc = sdk.NewMessageService(opts...)
	return m, nil
}

// Params builds the request body of one turn.
func (m *Model) Params(req exec.Request) (sdk.MessageNewParams, error) {
	cm := m.cfg.Model
	p := sdk.MessageNewParams{
		Model:     sdk.Model(cm.Model),
		MaxTokens: m.maxTokens,
	}
	if m.thinking > 0 {
		p.Thinking = sdk.ThinkingConfigParamOfEnabled(m.thinking)
	} else if cm.Temperature != nil {
		p.Temperature = param.NewOpt(*cm.Temperature)
	}
	if cm.TopP != nil {
		p.TopP = param.NewOpt(*cm.TopP)
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	// Tool results (and a user message after them) go in one user turn.
	var user []sdk.ContentBlockParamUnion
	flush := func() {
		if len(user) > 0 {
			p.Messages = append(p.Messages, sdk.NewUserMessage(user...))
			user = nil
		}
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case exec.RoleUser:
			user = append(user, sdk.NewTextBlock(msg.Text))
		case exec.RoleTool:
			text := msg.Text
			if text == "" {
				text = "(no output)" // the API refuses an empty text block
			}
			user = append(user, sdk.NewToolResultBlock(msg.ToolCallID, text, msg.IsError))
		case exec.RoleAssistant:
			flush()
			var blocks []sdk.ContentBlockParamUnion
			for _, t := range msg.Thinking {
				if t.Redacted != "" {
					blocks = append(blocks, sdk.NewRedactedThinkingBlock(t.Redacted))
				} else {
					blocks = append(blocks, sdk.NewThinkingBlock(t.Signature, t.Text))
				}
			}
			if msg.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(msg.Text))
			}
			for _, tc := range msg.ToolCalls {
				var input any = json.RawMessage(tc.Arguments)
				if !json.Valid(tc.Arguments) {
					input = map[string]any{}
				}
				blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, input, tc.Name))
			}
			if len(blocks) == 0 {
				blocks = append(blocks, sdk.NewTextBlock("(no output)"))
			}
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
		default:
			return p, fmt.Errorf("anthropic: unknown message role %q", msg.Role)
		}
	}
	flush()
	for _, t := range req.Tools {
		tp := sdk.ToolParam{Name: t.Name}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		if len(t.Parameters) > 0 {
			var schema map[string]any
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return p, fmt.Errorf("anthropic: tool %s: parameters: %w", t.Name, err)
			}
			for k, v := range schema {
				switch k {
				case "type":
				case "properties":
					tp.InputSchema.Properties = v
				case "required":
					if rs, ok := v.([]any); ok {
						for _, r := range rs {
							if s, ok := r.(string); ok {
								tp.InputSchema.Required = append(tp.InputSchema.Required, s)
							}
						}
					}
				default:
					if tp.InputSchema.ExtraFields == nil {
						tp.InputSchema.ExtraFields = map[string]any{}
					}
					tp.InputSchema.ExtraFields[k] = v
				}
			}
		}
		if tp.InputSchema.Properties == nil {
			tp.InputSchema.Properties = map[string]any{}
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tp})
	}
	return p, nil
}

// Turn sends the conversation and returns the assistant's turn.
func (m *Model) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	p, err := m.Params(req)
	if err != nil {
		return exec.Turn{}, err
	}
	return provider.RetryTurn(ctx, &m.cfg, func() (exec.Turn, error) { return m.attempt(ctx, p) })
}

func (m *Model) attempt(ctx context.Context, p sdk.MessageNewParams) (exec.Turn, error) {
	m.attempts.Store(0)
	stream := m.svc.NewStreaming(ctx, p)
	// Closing the stream closes the body: on a turn past its bound, hitl
	// stops reading at once.
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return exec.Turn{}, m.requestErr(err)
	}
	acc := accumulator{budget: m.cfg.Budget("anthropic")}
	stopped := false
	for stream.Next() {
		m.cfg.Delta()
		ev := stream.Current()
		if err := acc.add(ev); err != nil {
			return exec.Turn{}, err
		}
		if ev.Type == "message_stop" {
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return exec.Turn{}, m.wrap(err)
	}
	if ctx.Err() != nil {
		return exec.Turn{}, ctx.Err()
	}
	if !stopped {
		return exec.Turn{}, &provider.StreamError{Provider: "anthropic", Err: provider.ErrIncomplete, Cut: true}
	}
	return acc.turn(), nil
}

// accumulator assembles a turn from the events of its stream, counting
// what it keeps against the turn bound. (The SDK's Message.Accumulate
// appends to strings, copying the whole text on every delta, and keeps no
// count.)
type accumulator struct {
	budget *provider.Budget
	blocks []*block
	usage  sdk.Usage
}

type block struct {
	typ       string
	text      provider.Text // text, or thinking
	signature provider.Text
	data      string        // redacted_thinking
	id, name  string        // tool_use
	input     provider.Text // tool_use; "{}" until the first delta
	empty     bool          // input is the "{}" of content_block_start
}

func malformed(format string, args ...any) error {
	return &provider.StreamError{Provider: "anthropic", Err: fmt.Errorf(format, args...)}
}

func (a *accumulator) add(ev sdk.MessageStreamEventUnion) error {
	switch ev.Type {
	case "message_start":
		a.usage = ev.Message.Usage
	case "message_delta":
		u := ev.Usage
		a.usage.OutputTokens = u.OutputTokens
		if u.JSON.InputTokens.Valid() {
			a.usage.InputTokens = u.InputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			a.usage.CacheCreationInputTokens = u.CacheCreationInputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			a.usage.CacheReadInputTokens = u.CacheReadInputTokens
		}
	case "content_block_start":
		if ev.Index != int64(len(a.blocks)) {
			return malformed("content_block_start for block %d, expected block %d", ev.Index, len(a.blocks))
		}
		cb := ev.ContentBlock
		b := &block{typ: cb.Type}
		switch cb.Type {
		case "text":
			b.text.WriteString(cb.Text)
		case "thinking":
			b.text.WriteString(cb.Thinking)
			b.signature.WriteString(cb.Signature)
		case "redacted_thinking":
			b.data = cb.Data
		case "tool_use":
			b.id, b.name = cb.ID, cb.Name
			var raw struct {
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal([]byte(cb.RawJSON()), &raw); err != nil {
				return malformed("content_block_start: %v", err)
			}
			b.input.WriteString(string(raw.Input))
			b.empty = string(raw.Input) == "{}"
		}
		if err := a.budget.AddPart(); err != nil {
			return err
		}
		if err := a.budget.Add(len(cb.Text) + len(cb.Thinking) + len(cb.Signature) + len(cb.Data) + len(cb.ID) + len(cb.Name) + b.input.Len()); err != nil {
			return err
		}
		a.blocks = append(a.blocks, b)
	case "content_block_delta":
		if ev.Index < 0 || ev.Index >= int64(len(a.blocks)) {
			return malformed("content_block_delta for block %d, which has not started", ev.Index)
		}
		b, d := a.blocks[ev.Index], ev.Delta
		if err := a.budget.Add(len(d.Text) + len(d.PartialJSON) + len(d.Thinking) + len(d.Signature)); err != nil {
			return err
		}
		switch d.Type {
		case "text_delta":
			b.text.WriteString(d.Text)
		case "thinking_delta":
			b.text.WriteString(d.Thinking)
		case "signature_delta":
			b.signature.WriteString(d.Signature)
		case "input_json_delta":
			if d.PartialJSON != "" {
				if b.empty {
					b.input, b.empty = provider.Text{}, false
				}
				b.input.WriteString(d.PartialJSON)
			}
		}
	case "content_block_stop":
		if ev.Index < 0 || ev.Index >= int64(len(a.blocks)) {
			return malformed("content_block_stop for block %d, which has not started", ev.Index)
		}
	}
	return nil
}

func (a *accumulator) turn() exec.Turn {
	msg := exec.Message{Role: exec.RoleAssistant}
	var text strings.Builder
	for _, b := range a.blocks {
		switch b.typ {
		case "text":
			text.WriteString(b.text.String())
		case "thinking":
			msg.Thinking = append(msg.Thinking, exec.Thinking{Text: b.text.String(), Signature: b.signature.String()})
		case "redacted_thinking":
			msg.Thinking = append(msg.Thinking, exec.Thinking{Redacted: b.data})
		case "tool_use":
			args := json.RawMessage(b.input.String())
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			msg.ToolCalls = append(msg.ToolCalls, exec.ToolCall{ID: b.id, Name: b.name, Arguments: args})
		}
	}
	msg.Text = text.String()
	u := a.usage
	return exec.Turn{Message: msg, Usage: exec.Usage{
		InputTokens:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens: u.OutputTokens,
	}}
}

func (m *Model) requestErr(err error) error {
	var miss *cassette.MissError
	if errors.As(err, &miss) {
		return miss
	}
	if tl, ok := provider.AsTooLarge(err, "anthropic"); ok {
		return tl
	}
	w := m.wrap(err)
	var ae *provider.APIError
	if errors.As(w, &ae) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return w
	}
	if n := m.attempts.Load(); n > 1 {
		return fmt.Errorf("anthropic: %w (after %d retries)", err, n-1)
	}
	return fmt.Errorf("anthropic: %w", err)
}

// wrap turns an SDK error into an APIError (an error status, or an error
// event in the stream), a StreamError (the body failed), or leaves it.
func (m *Model) wrap(err error) error {
	if tl, ok := provider.AsTooLarge(err, "anthropic"); ok {
		return tl
	}
	var ae *sdk.Error
	if errors.As(err, &ae) {
		e := &provider.APIError{Provider: "anthropic", Status: ae.StatusCode, Retries: int(m.attempts.Load()) - 1}
		var env struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if raw := ae.RawJSON(); raw != "" {
			if json.Unmarshal([]byte(raw), &env) == nil {
				e.Type, e.Message = env.Error.Type, env.Error.Message
			} else {
				e.Message = strings.TrimSpace(raw)
			}
		}
		if e.Retries < 0 {
			e.Retries = 0
		}
		if ae.StatusCode/100 == 2 {
			// An error event in a stream that had started: an overloaded or
			// internal error is retried as a whole turn.
			e.Status, e.Retries = 0, 0
			cut := e.Type == "overloaded_error" || e.Type == "api_error"
			return &provider.StreamError{Provider: "anthropic", Err: e, Cut: cut}
		}
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if provider.IsCut(err) {
		return &provider.StreamError{Provider: "anthropic", Err: err, Cut: true}
	}
	return &provider.StreamError{Provider: "anthropic", Err: err}
}
