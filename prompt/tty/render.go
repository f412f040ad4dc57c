package tty

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/termtext"
)

// dismissTag goes on the question line: survey shows its Help only after
// "?" is typed, and Esc is hitl's key, not survey's.
const dismissTag = "(Esc to dismiss)"

// formatMessage is the message survey draws for q: a heading line (position
// among the call's questions, header, title), the question with tags on its
// last line, then the hint. Every piece of model text is escaped; lines
// after the first are indented under survey's "? ".
func formatMessage(q prompt.Question, tags ...string) string {
	lines := questionLines(q)
	if len(tags) > 0 {
		lines[len(lines)-1] += " " + strings.Join(tags, " ")
	}
	if q.Hint != "" {
		lines = append(lines, displayLines(q.Hint)...)
	}
	return strings.Join(lines, "\n  ")
}

// summaryMessage is the message of the line survey leaves once answered.
func summaryMessage(q prompt.Question) string {
	return strings.Join(questionLines(q), "\n  ")
}

func questionLines(q prompt.Question) []string {
	var head []string
	if q.Count > 1 {
		head = append(head, fmt.Sprintf("(%d of %d)", q.Index+1, q.Count))
	}
	if q.Header != "" {
		head = append(head, "["+termtext.Line(q.Header)+"]")
	}
	if q.Title != "" && q.Title != q.Message {
		head = append(head, termtext.Line(q.Title))
	}
	var lines []string
	if len(head) > 0 {
		lines = append(lines, strings.Join(head, " "))
	}
	if strings.TrimSpace(q.Message) != "" {
		lines = append(lines, displayLines(q.Message)...)
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	return lines
}

// displayLines escapes text and splits it into lines; tabs become spaces so
// survey counts the width it redraws correctly.
func displayLines(s string) []string {
	s = strings.ReplaceAll(termtext.Text(strings.TrimRight(s, "\n")), "\t", "    ")
	return strings.Split(s, "\n")
}

// valueMode is how typed text becomes content.
type valueMode int

const (
	plainString valueMode = iota // the text is the string
	numberValue                  // the text is a JSON number
	jsonValue                    // the text is JSON (else a string)
)

// valueModeOf decides from a text question's schema: none or type string
// → string; number/integer → number; anything else → JSON typed by the
// person and validated.
func valueModeOf(schema json.RawMessage) valueMode {
	if len(bytes.TrimSpace(schema)) == 0 || string(bytes.TrimSpace(schema)) == "null" {
		return plainString
	}
	var node struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(schema, &node) != nil || len(node.Type) == 0 {
		return jsonValue
	}
	var types []string
	var one string
	if json.Unmarshal(node.Type, &one) == nil {
		types = []string{one}
	} else if json.Unmarshal(node.Type, &types) != nil {
		return jsonValue
	}
	strs, nums := 0, 0
	for _, t := range types {
		switch t {
		case "string":
			strs++
		case "number", "integer":
			nums++
		}
	}
	switch {
	case strs == len(types):
		return plainString
	case nums == len(types):
		return numberValue
	}
	return jsonValue
}

// parse turns what the person typed into content.
func (m valueMode) parse(typed string) (json.RawMessage, error) {
	switch m {
	case numberValue:
		t := strings.TrimSpace(typed)
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil || dec.More() {
			return nil, fmt.Errorf("expected a number, got %q", typed)
		}
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("expected a number, got %q", typed)
		}
		return json.RawMessage(n.String()), nil
	case jsonValue:
		t := strings.TrimSpace(typed)
		if json.Valid([]byte(t)) && t != "" {
			return json.RawMessage(t), nil
		}
		// Not JSON: take it as a string; the schema decides.
		return json.Marshal(typed)
	}
	return json.Marshal(typed)
}

// defaultText is a default as the person would type it.
func (m valueMode) defaultText(def json.RawMessage) string {
	if m == plainString {
		var s string
		if json.Unmarshal(def, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, def) != nil {
		return ""
	}
	return buf.String()
}
