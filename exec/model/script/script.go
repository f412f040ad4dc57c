// Package script is the embedded offline model: it plays the assistant turns
// written in the agent file, in order, one per model turn. Text, when and
// arguments are Go templates over the previous turn's tool results.
package script

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

// Model plays a script. Its position is its only state (see State/Restore).
type Model struct {
	name    string
	entries []config.ScriptEntry
	message string
	pos     int // index of the next entry to consider
}

// New returns a script model starting at the first entry. message is the
// first user turn, available to templates as .Message.
func New(m *config.Model, message string) *Model {
	return &Model{name: m.Name, entries: m.Script, message: message}
}

// Data is what templates see.
type Data struct {
	// Last is the last tool result of the previous turn, JSON-decoded when it
	// is JSON, else the string; nil when the previous turn called no tool.
	Last any
	// Results are all tool results of the previous turn, in call order.
	Results []any
	// Message is the first user turn (after hitl resume SESSION MESSAGE,
	// the follow-up turn).
	Message string
}

// Turn plays the next entry whose when does not render "false" or "".
func (m *Model) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	data := templateData(req.Messages, m.message)
	for m.pos < len(m.entries) {
		e := m.entries[m.pos]
		m.pos++
		if e.When != "" {
			out, err := render(e.When, data)
			if err != nil {
				return exec.Turn{}, m.errorf(e, "when: %v", err)
			}
			if s := strings.TrimSpace(out); s == "false" || s == "" {
				continue
			}
		}
		return m.play(e, data)
	}
	return exec.Turn{}, fmt.Errorf("script model %s: the script ran out: all %d entries were played and the agent needs another turn; add an entry (e.g. text: done) to end the run", m.name, len(m.entries))
}

func (m *Model) errorf(e config.ScriptEntry, format string, args ...any) error {
	return fmt.Errorf("script model %s, entry %d (line %d): %s", m.name, m.pos, e.Pos.Line, fmt.Sprintf(format, args...))
}

func (m *Model) play(e config.ScriptEntry, data Data) (exec.Turn, error) {
	msg := exec.Message{Role: exec.RoleAssistant}
	if e.Text != "" {
		text, err := render(e.Text, data)
		if err != nil {
			return exec.Turn{}, m.errorf(e, "text: %v", err)
		}
		msg.Text = text
	}
	for i, c := range e.ToolCalls {
		args, err := arguments(c, data)
		if err != nil {
			return exec.Turn{}, m.errorf(e, "tool call %s: %v", c.Name, err)
		}
		msg.ToolCalls = append(msg.ToolCalls, exec.ToolCall{
			ID:        fmt.Sprintf("call_%d_%d", m.pos, i+1),
			Name:      c.Name,
			Arguments: args,
		})
	}
	return exec.Turn{Message: msg}, nil
}

func arguments(c config.ScriptCall, data Data) (json.RawMessage, error) {
	if c.ArgumentsJSON != "" {
		out, err := render(c.ArgumentsJSON, data)
		if err != nil {
			return nil, fmt.Errorf("arguments_json: %v", err)
		}
		// Invalid JSON is passed on as the model would: the loop returns it
		// to the model as an error result.
		return json.RawMessage(out), nil
	}
	if c.Arguments == nil {
		return json.RawMessage("{}"), nil
	}
	var v any
	if err := json.Unmarshal(c.Arguments, &v); err != nil {
		return nil, err
	}
	v, err := renderStrings(v, data)
	if err != nil {
		return nil, fmt.Errorf("arguments: %v", err)
	}
	// Without HTML escaping: a command's & and > stay readable in the
	// tool.call events, as a real model's arguments do.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// renderStrings renders the templates inside string values of v.
func renderStrings(v any, data Data) (any, error) {
	switch x := v.(type) {
	case string:
		if !strings.Contains(x, "{{") {
			return x, nil
		}
		return render(x, data)
	case []any:
		for i := range x {
			r, err := renderStrings(x[i], data)
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
	case map[string]any:
		for k := range x {
			r, err := renderStrings(x[k], data)
			if err != nil {
				return nil, err
			}
			x[k] = r
		}
	}
	return v, nil
}

func render(text string, data Data) (string, error) {
	t, err := template.New("script").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// templateData collects the tool results that follow the last assistant
// message.
func templateData(msgs []exec.Message, message string) Data {
	d := Data{Message: message}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == exec.RoleUser {
			d.Message = msgs[i].Text // a follow-up turn replaces the first
			break
		}
	}
	start := len(msgs)
	for start > 0 && msgs[start-1].Role == exec.RoleTool {
		start--
	}
	for _, m := range msgs[start:] {
		d.Results = append(d.Results, decode(m.Text))
	}
	if len(d.Results) > 0 {
		d.Last = d.Results[len(d.Results)-1]
	}
	return d
}

func decode(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v
	}
	return s
}

// State is the script position, kept in the session so a resumed run goes on
// where it stopped.
func (m *Model) State() json.RawMessage {
	data, _ := json.Marshal(m.pos)
	return data
}

// Restore sets the position saved by State.
func (m *Model) Restore(state json.RawMessage) error {
	return json.Unmarshal(state, &m.pos)
}
