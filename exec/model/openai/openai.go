// Package openai is the model provider for OpenAI's Chat Completions API and
// any server speaking it (Ollama, vLLM, LM Studio, llama.cpp, …), built on
// github.com/openai/openai-go/v3.
//
// Each turn is one streamed request (stream_options.include_usage): text and
// tool calls are assembled from the deltas, by index, and the turn is
// returned only when the stream finished, so a stream cut mid-way is retried
// as a whole turn. Reasoning models (o1, o3, o4, gpt-5…) get
// max_completion_tokens and no temperature or top_p; thinking_budget becomes
// reasoning_effort. A turn whose text and tool calls pass the configured
// bound (provider.Config.MaxTurn) fails at once with a
// *provider.TooLargeError and the stream is closed.
//
// The client is built without the SDK's environment defaults: the key, base
// URL and headers are only those resolved by the model package, so an ambient
// OPENAI_API_KEY is never sent anywhere it was not named.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model/cassette"
	"github.com/hitl-dev/hitl/exec/model/internal/provider"
)

// Model is an OpenAI-compatible chat model.
type Model struct {
	cfg       provider.Config
	name      string // "openai" or "ollama", for messages
	svc       oa.ChatCompletionService
	reasoning bool
	attempts  atomic.Int32 // HTTP attempts of the current request
	opts      []option.RequestOption
}

// New returns the model c describes. name labels errors ("openai", "ollama").
func New(name string, c provider.Config) *Model {
	opts := requestOptions(c)
	m := &Model{cfg: c, name: name, reasoning: IsReasoningModel(c.Model.Model)}
	opts = append(opts, option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		m.attempts.Add(1)
		return next(r)
	}))
	m.opts = opts
	// NewChatCompletionService, unlike NewClient, reads nothing from the
	// environment.
	m.svc = oa.NewChatCompletionService(opts...)
	return m
}

// IsReasoningModel reports whether model belongs to OpenAI's reasoning
// families (o1, o3, o4, gpt-5 except its chat variants), which take
// max_completion_tokens and reject temperature and top_p.
func IsReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"o1", "o3", "o4"} {
		if m == p || strings.HasPrefix(m, p+"-") {
			return true
		}
	}
	return strings.HasPrefix(m, "gpt-5") && !strings.Contains(m, "chat")
}

// Effort maps a thinking budget to a reasoning effort: a word is sent as it
// is; a number of tokens becomes low (≤ 2048), medium (≤ 8192) or high.
func Effort(effort string, tokens int64) shared.ReasoningEffort {
	if effort != "" {
		return shared.ReasoningEffort(effort)
	}
	switch {
	case tokens <= 0:
		return ""
	case tokens <= 2048:
		return shared.ReasoningEffortLow
	case tokens <= 8192:
		return shared.ReasoningEffortMedium
	}
	return shared.ReasoningEffortHigh
}

// Params builds the request body of one turn.
func (m *Model) Params(req exec.Request) (oa.ChatCompletionNewParams, error) {
	cm := m.cfg.Model
	p := oa.ChatCompletionNewParams{
		Model:         shared.ChatModel(cm.Model),
		StreamOptions: oa.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if cm.MaxTokens != nil {
		if m.reasoning {
			p.MaxCompletionTokens = param.NewOpt(*cm.MaxTokens)
		} else {
			p.MaxTokens = param.NewOpt(*cm.MaxTokens)
		}
	}
	if !m.reasoning {
		if cm.Temperature != nil {
			p.Temperature = param.NewOpt(*cm.Temperature)
		}
		if cm.TopP != nil {
			p.TopP = param.NewOpt(*cm.TopP)
		}
	}
	if tb := cm.ThinkingBudget; tb != nil {
		p.ReasoningEffort = Effort(tb.Effort, tb.Tokens)
	}
	if cm.FrequencyPenalty != nil {
		p.FrequencyPenalty = param.NewOpt(*cm.FrequencyPenalty)
	}
	if cm.PresencePenalty != nil {
		p.PresencePenalty = param.NewOpt(*cm.PresencePenalty)
	}
	if o := req.Output; o != nil {
		// structured_output: the answer constrained to the schema.
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: o.Name, Schema: json.RawMessage(o.Schema)}
		if o.Description != "" {
			js.Description = param.NewOpt(o.Description)
		}
		if o.Strict {
			js.Strict = param.NewOpt(true)
		}
		p.ResponseFormat = oa.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, oa.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case exec.RoleUser:
			p.Messages = append(p.Messages, oa.UserMessage(msg.Text))
		case exec.RoleTool:
			p.Messages = append(p.Messages, oa.ToolMessage(msg.Text, msg.ToolCallID))
		case exec.RoleAssistant:
			a := oa.ChatCompletionAssistantMessageParam{}
			if msg.Text != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = param.NewOpt(msg.Text)
			}
			for _, tc := range msg.ToolCalls {
				args := string(tc.Arguments)
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, oa.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oa.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: oa.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
					},
				})
			}
			p.Messages = append(p.Messages, oa.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return p, fmt.Errorf("%s: unknown message role %q", m.name, msg.Role)
		}
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fd.Description = param.NewOpt(t.Description)
		}
		schema, err := m.schema(t)
		if err != nil {
			return p, err
		}
		fd.Parameters = schema
		p.Tools = append(p.Tools, oa.ChatCompletionFunctionTool(fd))
	}
	return p, nil
}

// schema is a tool's parameters as a JSON object (an empty object schema
// when it has none).
func (m *Model) schema(t exec.ToolSpec) (map[string]any, error) {
	if len(t.Parameters) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(t.Parameters, &schema); err != nil {
		return nil, fmt.Errorf("%s: tool %s: parameters: %w", m.name, t.Name, err)
	}
	return schema, nil
}

// Turn sends the conversation and returns the assistant's turn.
func (m *Model) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	p, err := m.Params(req)
	if err != nil {
		return exec.Turn{}, err
	}
	return provider.RetryTurn(ctx, &m.cfg, func() (exec.Turn, error) { return m.attempt(ctx, p) })
}

type callAcc struct {
	id   string
	name provider.Text
	args provider.Text
}

func (m *Model) attempt(ctx context.Context, p oa.ChatCompletionNewParams) (exec.Turn, error) {
	m.attempts.Store(0)
	stream := m.svc.NewStreaming(ctx, p)
	// Closing the stream closes the body: on a turn past its bound, hitl
	// stops reading at once.
	defer stream.Close()
	if err := stream.Err(); err != nil {
		// The request itself failed, after the SDK's own retries.
		return exec.Turn{}, m.requestErr(err)
	}

	var (
		text     provider.Text
		calls    = map[int64]*callAcc{}
		usage    exec.Usage
		finished bool
		budget   = m.cfg.Budget(m.name)
	)
	for stream.Next() {
		m.cfg.Delta()
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			usage = exec.Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if err := budget.Add(len(ch.Delta.Content)); err != nil {
				return exec.Turn{}, err
			}
			text.WriteString(ch.Delta.Content)
			for _, d := range ch.Delta.ToolCalls {
				c := calls[d.Index]
				if c == nil {
					if err := budget.AddPart(); err != nil {
						return exec.Turn{}, err
					}
					c = &callAcc{}
					calls[d.Index] = c
				}
				if err := budget.Add(len(d.ID) + len(d.Function.Name) + len(d.Function.Arguments)); err != nil {
					return exec.Turn{}, err
				}
				if d.ID != "" {
					c.id = d.ID
				}
				c.name.WriteString(d.Function.Name)
				c.args.WriteString(d.Function.Arguments)
			}
			if ch.FinishReason != "" {
				finished = true
			}
		}
	}
	if err := stream.Err(); err != nil {
		return exec.Turn{}, m.wrap(err)
	}
	if ctx.Err() != nil {
		return exec.Turn{}, ctx.Err()
	}
	if !finished {
		return exec.Turn{}, &provider.StreamError{Provider: m.name, Err: provider.ErrIncomplete, Cut: true}
	}

	msg := exec.Message{Role: exec.RoleAssistant, Text: text.String()}
	idx := make([]int64, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for n, i := range idx {
		c := calls[i]
		if c.id == "" {
			c.id = fmt.Sprintf("call_%d", n)
		}
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		msg.ToolCalls = append(msg.ToolCalls, exec.ToolCall{ID: c.id, Name: c.name.String(), Arguments: json.RawMessage(args)})
	}
	return exec.Turn{Message: msg, Usage: usage}, nil
}

// requestErr is the error of a request that got no usable response.
func (m *Model) requestErr(err error) error {
	var miss *cassette.MissError
	if errors.As(err, &miss) {
		return miss
	}
	if tl, ok := provider.AsTooLarge(err, m.name); ok {
		return tl
	}
	if w := m.wrap(err); isAPI(w) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return w
	}
	return fmt.Errorf("%s: %w", m.name, err)
}

func isAPI(err error) bool {
	var ae *provider.APIError
	return errors.As(err, &ae)
}

// wrap turns an SDK error into an APIError (an error status), a StreamError
// (the body failed), or leaves it (context ends, connection errors after
// retries).
func (m *Model) wrap(err error) error {
	if tl, ok := provider.AsTooLarge(err, m.name); ok {
		return tl
	}
	var ae *oa.Error
	if errors.As(err, &ae) {
		e := &provider.APIError{Provider: m.name, Status: ae.StatusCode, Message: ae.Message, Type: ae.Type,
			Retries: int(m.attempts.Load()) - 1}
		if e.Type == "" {
			e.Type = ae.Code
		}
		if e.Message == "" && ae.Response != nil {
			e.Message = strings.TrimSpace(ae.RawJSON())
		}
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if provider.IsCut(err) {
		return &provider.StreamError{Provider: m.name, Err: err, Cut: true}
	}
	return &provider.StreamError{Provider: m.name, Err: err}
}

// Embedder is an OpenAI-compatible embeddings API.
type Embedder struct {
	cfg provider.Config
	svc oa.EmbeddingService
}

// NewEmbedder returns the embeddings API c describes.
func NewEmbedder(c provider.Config) *Embedder {
	return &Embedder{cfg: c, svc: oa.NewEmbeddingService(requestOptions(c)...)}
}

// requestOptions are how every request reaches c's server: its URL, HTTP
// client, retries and key (none sent when none is set).
func requestOptions(c provider.Config) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithBaseURL(c.BaseURL),
		option.WithHTTPClient(c.HTTPClient),
		option.WithMaxRetries(c.Retries()),
		option.WithMaxRetryDelay(c.RetryDelayCap()),
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	return opts
}

// Embed returns the vectors of texts, in order (dims > 0 asks for that
// length, as text-embedding-3 models take it).
func (e *Embedder) Embed(ctx context.Context, texts []string, dims int) ([][]float64, error) {
	p := oa.EmbeddingNewParams{
		Model: oa.EmbeddingModel(e.cfg.Model.Model),
		Input: oa.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
	}
	if dims > 0 {
		p.Dimensions = param.NewOpt(int64(dims))
	}
	res, err := e.svc.New(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("embeddings %s: %w", e.cfg.Model.Model, err)
	}
	out := make([][]float64, len(texts))
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= len(texts) {
			return nil, fmt.Errorf("embeddings %s: the answer has an item %d of %d", e.cfg.Model.Model, d.Index, len(texts))
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if v == nil {
			return nil, fmt.Errorf("embeddings %s: the answer has no vector for input %d", e.cfg.Model.Model, i)
		}
	}
	return out, nil
}
