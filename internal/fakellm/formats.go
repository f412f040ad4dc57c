package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// More wire formats: Gemini's streamGenerateContent and OpenAI's Responses
// API; Any answers each request in the format its path names.
const (
	Gemini Format = iota + 100
	Responses
	Any
)

// formatOf is the format s answers r in.
func (s *Server) formatOf(r *http.Request) Format {
	if s.Format != Any {
		return s.Format
	}
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, ":streamGenerateContent"), strings.HasSuffix(p, ":generateContent"):
		return Gemini
	case strings.HasSuffix(p, "/responses"):
		return Responses
	case strings.HasSuffix(p, "/messages"):
		return Anthropic
	}
	return OpenAI
}

// Events is rep in format f.
func Events(f Format, rep Reply) []string {
	switch f {
	case Anthropic:
		return AnthropicEvents(rep)
	case Gemini:
		return GeminiEvents(rep)
	case Responses:
		return ResponsesEvents(rep)
	}
	return OpenAIEvents(rep)
}

// callArgs is a call's argument chunks joined, as a JSON value ({} when
// empty or not JSON).
func callArgs(c Call) any {
	var v any
	if err := json.Unmarshal([]byte(strings.Join(c.Args, "")), &v); err != nil || v == nil {
		return map[string]any{}
	}
	return v
}

// GeminiEvents is rep as streamGenerateContent SSE data lines: the thoughts
// and text chunks, then the function calls and the finish reason with the
// usage.
func GeminiEvents(rep Reply) []string {
	var out []string
	chunk := func(parts []any, finish string, usage bool) {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		c := map[string]any{"candidates": []any{cand}, "modelVersion": "fake"}
		if usage {
			c["usageMetadata"] = map[string]any{"promptTokenCount": rep.InTokens, "candidatesTokenCount": rep.OutTokens, "totalTokenCount": rep.InTokens + rep.OutTokens}
		}
		out = append(out, "data: "+js(c)+"\r\n\r\n")
	}
	for _, t := range rep.Thinking {
		part := map[string]any{"text": t.Text, "thought": true}
		if t.Signature != "" {
			part["thoughtSignature"] = t.Signature
		}
		chunk([]any{part}, "", false)
	}
	for _, t := range rep.Text {
		chunk([]any{map[string]any{"text": t}}, "", false)
	}
	var calls []any
	for _, c := range rep.Calls {
		fc := map[string]any{"name": c.Name, "args": callArgs(c)}
		if c.ID != "" {
			fc["id"] = c.ID
		}
		calls = append(calls, map[string]any{"functionCall": fc})
	}
	if calls == nil {
		calls = []any{}
	}
	chunk(calls, "STOP", true)
	return out
}

// ResponsesEvents is rep as Responses API SSE events: the message's text
// deltas and its done events, each function call (added, argument deltas, done), then
// response.completed with the usage.
func ResponsesEvents(rep Reply) []string {
	var out []string
	seq := 0
	ev := func(typ string, data map[string]any) {
		data["type"], data["sequence_number"] = typ, seq
		seq++
		out = append(out, fmt.Sprintf("event: %s\ndata: %s\n\n", typ, js(data)))
	}
	resp := func(status string, usage bool) map[string]any {
		r := map[string]any{"id": "resp_fake", "object": "response", "status": status, "model": "fake", "output": []any{}}
		if usage {
			r["usage"] = map[string]any{"input_tokens": rep.InTokens, "output_tokens": rep.OutTokens, "total_tokens": rep.InTokens + rep.OutTokens}
		}
		return r
	}
	ev("response.created", map[string]any{"response": resp("in_progress", false)})
	idx := 0
	if len(rep.Text) > 0 {
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "status": "in_progress", "content": []any{}}})
		for _, t := range rep.Text {
			ev("response.output_text.delta", map[string]any{"output_index": idx, "item_id": "msg_fake", "content_index": 0, "delta": t})
		}
		text := strings.Join(rep.Text, "")
		ev("response.output_text.done", map[string]any{"output_index": idx, "item_id": "msg_fake", "content_index": 0, "text": text})
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}})
		idx++
	}
	for i, c := range rep.Calls {
		id := fmt.Sprintf("fc_%d", i)
		item := map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": c.ID, "name": c.Name, "arguments": ""}
		if c.Namespace != "" {
			item["namespace"] = c.Namespace
		}
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": item})
		for _, a := range c.Args {
			ev("response.function_call_arguments.delta", map[string]any{"output_index": idx, "item_id": id, "delta": a})
		}
		done := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": c.ID, "name": c.Name, "arguments": strings.Join(c.Args, "")}
		if c.Namespace != "" {
			done["namespace"] = c.Namespace
		}
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": done})
		idx++
	}
	ev("response.completed", map[string]any{"response": resp("completed", true)})
	return out
}

// foreverParts are, for a stream of text that never ends: the events before
// the first text delta, one text delta event, and the start of a text delta
// data line (for a line that never ends).
func foreverParts(f Format, chunk string) (head, next, line string) {
	ev := Events(f, Reply{Text: []string{chunk}})
	switch f {
	case Anthropic:
		return ev[0] + ev[1] + ev[2], ev[3], `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`
	case Gemini:
		return "", ev[0], `data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"`
	case Responses:
		return ev[0] + ev[1], ev[2], `data: {"type":"response.output_text.delta","output_index":0,"item_id":"msg_fake","content_index":0,"delta":"`
	}
	return ev[0], ev[1], `data: {"type":"content_block_delta","choices":[{"index":0,"delta":{"content":"`
}

// geminiError is Gemini's error body.
func geminiError(status int, msg string) string {
	st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[status]
	if st == "" {
		st = "INTERNAL"
	}
	return js(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
}
