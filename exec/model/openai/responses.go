package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model/internal/provider"
)

// Responses is a model served through OpenAI's Responses API (api_type
// openai_responses), on openai-go's responses package: the same client
// options, bounds and retries as the Chat Completions model. Each turn is
// one streamed POST /responses with store false and the whole conversation
// as input items; the system prompt is its instructions, thinking_budget its
// reasoning effort. Text and function calls are assembled from the stream's
// events and the turn ends at response.completed; response.failed,
// response.incomplete and error events fail it.
type Responses struct {
	*Model
	svc responses.ResponseService
}

// NewResponses returns the Responses model c describes. The Responses API
// takes no frequency or presence penalty, so a model that sets one is an
// error rather than a key silently dropped.
func NewResponses(name string, c provider.Config) (*Responses, error) {
	cm := c.Model
	if cm.FrequencyPenalty != nil || cm.PresencePenalty != nil {
		return nil, fmt.Errorf("model %s: frequency_penalty and presence_penalty do not exist in the Responses API (api_type openai_responses); remove them or use openai_chatcompletions", cm.Name)
	}
	m := New(name, c)
	return &Responses{Model: m, svc: responses.NewResponseService(m.opts...)}, nil
}

// ResponsesParams builds the request body of one turn.
func (m *Responses) ResponsesParams(req exec.Request) (responses.ResponseNewParams, error) {
	cm := m.cfg.Model
	p := responses.ResponseNewParams{Model: shared.ResponsesModel(cm.Model), Store: param.NewOpt(false)}
	if req.System != "" {
		p.Instructions = param.NewOpt(req.System)
	}
	if cm.MaxTokens != nil {
		p.MaxOutputTokens = param.NewOpt(*cm.MaxTokens)
	}
	if !m.reasoning {
		if cm.Temperature != nil {
			p.Temperature = param.NewOpt(*cm.Temperature)
		}
		if cm.TopP != nil {
			p.TopP = param.NewOpt(*cm.TopP)
		}
	}
	if tb := cm.ThinkingBudget; tb != nil && !tb.Disabled {
		p.Reasoning = shared.ReasoningParam{Effort: Effort(tb.Effort, tb.Tokens)}
	}
	var items responses.ResponseInputParam
	for _, msg := range req.Messages {
		switch msg.Role {
		case exec.RoleUser:
			items = append(items, responses.ResponseInputItemParamOfMessage(msg.Text, responses.EasyInputMessageRoleUser))
		case exec.RoleAssistant:
			if msg.Text != "" {
				items = append(items, responses.ResponseInputItemParamOfMessage(msg.Text, responses.EasyInputMessageRoleAssistant))
			}
			for _, tc := range msg.ToolCalls {
				args := string(tc.Arguments)
				if args == "" {
					args = "{}"
				}
				items = append(items, responses.ResponseInputItemParamOfFunctionCall(args, tc.ID, tc.Name))
			}
		case exec.RoleTool:
			out := responses.ResponseInputItemParamOfFunctionCallOutput(msg.Text)
			out.OfFunctionCallOutput.CallID = param.NewOpt(msg.ToolCallID)
			items = append(items, out)
		default:
			return p, fmt.Errorf("%s: unknown message role %q", m.name, msg.Role)
		}
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	for _, t := range req.Tools {
		schema, err := m.schema(t)
		if err != nil {
			return p, err
		}
		ft := responses.FunctionToolParam{Name: t.Name, Parameters: schema, Strict: param.NewOpt(false)}
		if t.Description != "" {
			ft.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &ft})
	}
	return p, nil
}

// Turn sends the conversation and returns the assistant's turn.
func (m *Responses) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	p, err := m.ResponsesParams(req)
	if err != nil {
		return exec.Turn{}, err
	}
	return provider.RetryTurn(ctx, &m.cfg, func() (exec.Turn, error) { return m.attempt(ctx, p) })
}

type respCall struct {
	callID, name string
	args         provider.Text
	done         bool
}

func (m *Responses) attempt(ctx context.Context, p responses.ResponseNewParams) (exec.Turn, error) {
	m.attempts.Store(0)
	stream := m.svc.NewStreaming(ctx, p)
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return exec.Turn{}, m.requestErr(err)
	}
	var (
		text     provider.Text
		calls    []*respCall
		byItem   = map[string]*respCall{}
		usage    exec.Usage
		finished bool
		budget   = m.cfg.Budget(m.name)
	)
	for stream.Next() {
		m.cfg.Delta()
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			if err := budget.Add(len(ev.Delta)); err != nil {
				return exec.Turn{}, err
			}
			text.WriteString(ev.Delta)
		case "response.output_item.added", "response.output_item.done":
			if ev.Item.Type != "function_call" {
				continue
			}
			c := byItem[ev.Item.ID]
			if c == nil {
				if err := budget.AddPart(); err != nil {
					return exec.Turn{}, err
				}
				c = &respCall{}
				byItem[ev.Item.ID] = c
				calls = append(calls, c)
			}
			if err := budget.Add(len(ev.Item.CallID) + len(ev.Item.Name)); err != nil {
				return exec.Turn{}, err
			}
			c.callID, c.name = ev.Item.CallID, ev.Item.Name
			if ev.Type == "response.output_item.done" && !c.done {
				// The item holds its whole arguments; they replace the deltas.
				args := ev.Item.Arguments.OfString
				if err := budget.Add(len(args)); err != nil {
					return exec.Turn{}, err
				}
				c.args = provider.Text{}
				c.args.WriteString(args)
				c.done = true
			}
		case "response.function_call_arguments.delta":
			c := byItem[ev.ItemID]
			if c == nil || c.done {
				continue
			}
			if err := budget.Add(len(ev.Delta)); err != nil {
				return exec.Turn{}, err
			}
			c.args.WriteString(ev.Delta)
		case "response.completed":
			finished = true
			usage = exec.Usage{InputTokens: ev.Response.Usage.InputTokens, OutputTokens: ev.Response.Usage.OutputTokens}
		case "response.failed", "response.incomplete":
			msg := ev.Response.Error.Message
			if msg == "" {
				msg = strings.TrimPrefix(ev.Type, "response.") + ": " + ev.Response.IncompleteDetails.Reason
			}
			return exec.Turn{}, &provider.APIError{Provider: m.name, Type: string(ev.Response.Error.Code), Message: msg}
		case "error":
			return exec.Turn{}, &provider.APIError{Provider: m.name, Type: ev.Code, Message: ev.Message}
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
	for n, c := range calls {
		if c.callID == "" {
			c.callID = fmt.Sprintf("call_%d", n)
		}
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		msg.ToolCalls = append(msg.ToolCalls, exec.ToolCall{ID: c.callID, Name: c.name, Arguments: json.RawMessage(args)})
	}
	return exec.Turn{Message: msg, Usage: usage}, nil
}
