// Package gemini is the model provider for Google's Gemini API (provider
// google), built on the official SDK google.golang.org/genai.
//
// Each turn is one streamed request (models/MODEL:streamGenerateContent with
// alt=sse): text, thoughts and function calls are accumulated, and the turn
// is returned only when a candidate reports its finish reason, so a stream
// cut mid-way is retried as a whole turn. The system prompt is the request's
// systemInstruction; tool results go back as functionResponse parts named for
// the tool (with the call's id when Gemini gave one), consecutive results in
// one user content. Thought signatures (Gemini 3 requires them back with
// function calls) are kept on the tool call (exec.ToolCall.Signature) and, for
// text, as a signature-only exec.Thinking, and sent back as they came.
//
// thinking_budget: on Gemini 3 and later an effort word is thinkingLevel
// (minimal, low, medium, high); otherwise, and for a number of tokens,
// thinkingBudget (-1 dynamic; an effort word is 1024, 2048, 8192 or 16384
// tokens). none or 0 sends thinkingBudget 0 (Gemini 3, which cannot turn
// thinking off, gets thinkingLevel low). Thoughts are asked for
// (includeThoughts) whenever a budget is set and kept in the turn's thinking.
//
// The client is built with the key, base URL and backend resolved by the
// model package: the SDK's own environment lookups (GOOGLE_API_KEY,
// GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GEMINI_BASE_URL) never choose where a
// request goes or which key it carries.
package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/genai"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model/cassette"
	"github.com/hitl-dev/hitl/exec/model/internal/provider"
	"github.com/hitl-dev/hitl/internal/termtext"
)

// Name labels the provider's errors.
const Name = "google"

// generatedID prefixes the ids hitl gives function calls Gemini sent
// without one; such ids are not sent back.
const generatedID = "hitl_call_"

// Model is a Gemini model.
type Model struct {
	cfg    provider.Config
	models *genai.Models
	rt     *retryTransport
}

// New returns the model c describes. c.APIKey is sent as x-goog-api-key.
func New(c provider.Config) (*Model, error) {
	m := &Model{cfg: c}
	client := *c.HTTPClient
	next := client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	lines := wholeLines{next: next, limit: c.MaxTurn()}
	m.rt = &retryTransport{next: lines, retries: c.Retries(), delayCap: c.RetryDelayCap(), firstDelay: c.TurnRetryDelay}
	client.Transport = m.rt
	key := c.APIKey
	if key == "" {
		// Replaying a cassette needs no key; an empty one would make the
		// SDK read GOOGLE_API_KEY or GEMINI_API_KEY itself.
		key = "unused"
	}
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      key,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  &client,
		HTTPOptions: genai.HTTPOptions{BaseURL: c.BaseURL},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	m.models = gc.Models
	return m, nil
}

// IsGemini3 reports whether model is Gemini 3 or later, which takes a
// thinking level rather than a token budget.
func IsGemini3(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	rest, ok := strings.CutPrefix(m, "gemini-")
	if !ok || rest == "" {
		return false
	}
	return rest[0] >= '3' && rest[0] <= '9'
}

// effortTokens are the token budgets of the effort words on models that
// take a budget.
var effortTokens = map[string]int32{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}

// Thinking is the thinking configuration of model for budget tb (nil: none).
func Thinking(model string, tb *config.ThinkingBudget) *genai.ThinkingConfig {
	if tb == nil {
		return nil
	}
	g3 := IsGemini3(model)
	if tb.Disabled {
		if g3 {
			return &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelLow}
		}
		return &genai.ThinkingConfig{ThinkingBudget: genai.Ptr[int32](0)}
	}
	tc := &genai.ThinkingConfig{IncludeThoughts: true}
	switch {
	case tb.Effort != "" && g3:
		tc.ThinkingLevel = genai.ThinkingLevel(strings.ToUpper(tb.Effort))
	case tb.Effort != "":
		tc.ThinkingBudget = genai.Ptr(effortTokens[tb.Effort])
	default:
		tc.ThinkingBudget = genai.Ptr(int32(tb.Tokens))
	}
	return tc
}

// Params builds the contents and configuration of one turn.
func (m *Model) Params(req exec.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	cm := m.cfg.Model
	gc := &genai.GenerateContentConfig{AutomaticContinuation: genai.Ptr(false)}
	if cm.MaxTokens != nil {
		gc.MaxOutputTokens = int32(*cm.MaxTokens)
	}
	if cm.Temperature != nil {
		gc.Temperature = genai.Ptr(float32(*cm.Temperature))
	}
	if cm.TopP != nil {
		gc.TopP = genai.Ptr(float32(*cm.TopP))
	}
	if cm.FrequencyPenalty != nil {
		gc.FrequencyPenalty = genai.Ptr(float32(*cm.FrequencyPenalty))
	}
	if cm.PresencePenalty != nil {
		gc.PresencePenalty = genai.Ptr(float32(*cm.PresencePenalty))
	}
	gc.ThinkingConfig = Thinking(cm.Model, cm.ThinkingBudget)
	if req.System != "" {
		gc.SystemInstruction = genai.NewContentFromText(req.System, genai.RoleUser)
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			var schema any = map[string]any{"type": "object", "properties": map[string]any{}}
			if len(t.Parameters) > 0 {
				if err := json.Unmarshal(t.Parameters, &schema); err != nil {
					return nil, nil, fmt.Errorf("%s: tool %s: parameters: %w", Name, t.Name, err)
				}
			}
			decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: schema})
		}
		gc.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}

	var contents []*genai.Content
	for _, msg := range req.Messages {
		switch msg.Role {
		case exec.RoleUser:
			contents = append(contents, genai.NewContentFromText(msg.Text, genai.RoleUser))
		case exec.RoleTool:
			key := "result"
			if msg.IsError {
				key = "error"
			}
			fr := &genai.FunctionResponse{Name: msg.ToolName, Response: map[string]any{key: msg.Text}}
			if !strings.HasPrefix(msg.ToolCallID, generatedID) {
				fr.ID = msg.ToolCallID
			}
			part := &genai.Part{FunctionResponse: fr}
			if n := len(contents); n > 0 && contents[n-1].Role == genai.RoleUser && isResponses(contents[n-1]) {
				contents[n-1].Parts = append(contents[n-1].Parts, part)
			} else {
				contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{part}})
			}
		case exec.RoleAssistant:
			contents = append(contents, assistantContent(msg))
		default:
			return nil, nil, fmt.Errorf("%s: unknown message role %q", Name, msg.Role)
		}
	}
	return contents, gc, nil
}

func isResponses(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p.FunctionResponse == nil {
			return false
		}
	}
	return len(c.Parts) > 0
}

// assistantContent is a model turn as Gemini sent it: its text (with its
// signature, if any) and its function calls (with theirs).
func assistantContent(msg exec.Message) *genai.Content {
	c := &genai.Content{Role: genai.RoleModel}
	if msg.Text != "" || len(msg.ToolCalls) == 0 {
		p := genai.NewPartFromText(msg.Text)
		for _, t := range msg.Thinking {
			if t.Text == "" && t.Signature != "" {
				p.ThoughtSignature, _ = base64.StdEncoding.DecodeString(t.Signature)
			}
		}
		c.Parts = append(c.Parts, p)
	}
	for _, tc := range msg.ToolCalls {
		var args map[string]any
		if err := json.Unmarshal(tc.Arguments, &args); err != nil || args == nil {
			args = map[string]any{}
		}
		fc := &genai.FunctionCall{Name: tc.Name, Args: args}
		if !strings.HasPrefix(tc.ID, generatedID) {
			fc.ID = tc.ID
		}
		p := &genai.Part{FunctionCall: fc}
		if tc.Signature != "" {
			p.ThoughtSignature, _ = base64.StdEncoding.DecodeString(tc.Signature)
		}
		c.Parts = append(c.Parts, p)
	}
	return c
}

// Turn sends the conversation and returns the assistant's turn.
func (m *Model) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	contents, gc, err := m.Params(req)
	if err != nil {
		return exec.Turn{}, err
	}
	return provider.RetryTurn(ctx, &m.cfg, func() (exec.Turn, error) {
		return m.attempt(ctx, contents, gc, len(req.Messages))
	})
}

func (m *Model) attempt(ctx context.Context, contents []*genai.Content, gc *genai.GenerateContentConfig, turn int) (exec.Turn, error) {
	m.rt.attempts.Store(0)
	var (
		text     provider.Text
		thought  provider.Text
		textSig  []byte
		calls    []exec.ToolCall
		usage    exec.Usage
		finished bool
		budget   = m.cfg.Budget(Name)
	)
	for resp, err := range m.models.GenerateContentStream(ctx, m.cfg.Model.Model, contents, gc) {
		if err != nil {
			return exec.Turn{}, m.wrap(ctx, err)
		}
		m.cfg.Delta()
		if u := resp.UsageMetadata; u != nil {
			usage = exec.Usage{InputTokens: int64(u.PromptTokenCount), OutputTokens: int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount)}
		}
		if len(resp.Candidates) == 0 {
			if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
				return exec.Turn{}, &provider.APIError{Provider: Name, Type: string(pf.BlockReason), Message: "the prompt was blocked: " + pf.BlockReasonMessage}
			}
			continue
		}
		cand := resp.Candidates[0]
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				if err := budget.Add(len(p.Text) + len(p.ThoughtSignature)); err != nil {
					return exec.Turn{}, err
				}
				switch {
				case p.FunctionCall != nil:
					if err := budget.AddPart(); err != nil {
						return exec.Turn{}, err
					}
					args, err := json.Marshal(p.FunctionCall.Args)
					if err != nil {
						return exec.Turn{}, &provider.StreamError{Provider: Name, Err: err}
					}
					if p.FunctionCall.Args == nil {
						args = []byte("{}")
					}
					if err := budget.Add(len(args) + len(p.FunctionCall.Name) + len(p.FunctionCall.ID)); err != nil {
						return exec.Turn{}, err
					}
					id := p.FunctionCall.ID
					if id == "" {
						id = fmt.Sprintf("%s%d_%d", generatedID, turn, len(calls))
					}
					tc := exec.ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: args}
					if len(p.ThoughtSignature) > 0 {
						tc.Signature = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
					}
					calls = append(calls, tc)
				case p.Thought:
					thought.WriteString(p.Text)
				default:
					text.WriteString(p.Text)
					if len(p.ThoughtSignature) > 0 {
						textSig = p.ThoughtSignature
					}
				}
			}
		}
		if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
			finished = true
			if err := refused(cand); err != nil {
				return exec.Turn{}, err
			}
		}
	}
	if ctx.Err() != nil {
		return exec.Turn{}, ctx.Err()
	}
	if !finished {
		return exec.Turn{}, &provider.StreamError{Provider: Name, Err: provider.ErrIncomplete, Cut: true}
	}
	msg := exec.Message{Role: exec.RoleAssistant, Text: text.String(), ToolCalls: calls}
	if thought.Len() > 0 {
		msg.Thinking = append(msg.Thinking, exec.Thinking{Text: thought.String()})
	}
	if len(textSig) > 0 {
		msg.Thinking = append(msg.Thinking, exec.Thinking{Signature: base64.StdEncoding.EncodeToString(textSig)})
	}
	return exec.Turn{Message: msg, Usage: usage}, nil
}

// refused is the error of a candidate Gemini stopped for a reason other
// than the end of its answer or its token limit (safety, recitation, a
// malformed function call, …).
func refused(c *genai.Candidate) error {
	switch c.FinishReason {
	case genai.FinishReasonStop, genai.FinishReasonMaxTokens:
		return nil
	}
	msg := "the model stopped: " + string(c.FinishReason)
	if c.FinishMessage != "" {
		msg += ": " + c.FinishMessage
	}
	return &provider.APIError{Provider: Name, Type: string(c.FinishReason), Message: msg}
}

// wrap turns an SDK error into an APIError (an error status), a
// TooLargeError, a cassette miss, the context's error, or a StreamError.
func (m *Model) wrap(ctx context.Context, err error) error {
	var miss *cassette.MissError
	if errors.As(err, &miss) {
		return miss
	}
	if tl, ok := provider.AsTooLarge(err, Name); ok {
		return tl
	}
	var ae genai.APIError
	if errors.As(err, &ae) {
		e := &provider.APIError{Provider: Name, Status: ae.Code, Type: ae.Status, Message: ae.Message, Retries: max(int(m.rt.attempts.Load())-1, 0)}
		if e.Status != 0 && http.StatusText(e.Status) == "" {
			e.Status = 0
		}
		return e
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if provider.IsCut(err) {
		return &provider.StreamError{Provider: Name, Err: err, Cut: true}
	}
	return &provider.StreamError{Provider: Name, Err: shortError{err}}
}

// shortError is an SDK error whose message (which quotes the stream line
// it could not read, up to the bound) is shortened and escaped for the
// terminal.
type shortError struct{ err error }

func (e shortError) Error() string {
	s, cut := termtext.Shorten(e.err.Error(), 500)
	if cut > 0 {
		s = fmt.Sprintf("%s (%d bytes cut)", s, cut)
	}
	return termtext.Line(s)
}

func (e shortError) Unwrap() error { return e.err }
