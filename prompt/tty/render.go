package tty

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/hitl-dev/hitl/prompt"
	"golang.org/x/term"
	"golang.org/x/text/width"
)

// dismissTag goes on the question line: survey shows its Help only after
// "?" is typed, and Esc is hitl's key, not survey's.
const dismissTag = "(Esc to dismiss)"

// formatMessage is the message survey draws for q: a heading line (position
// among the call's questions, header, title), the question with tags on its
// last line, then the hint. Every piece of model text is escaped; lines
// after the first are indented under survey's "? ".
func formatMessage(q prompt.Question, tags ...string) string {
	return strings.Join(messageLines(q, tags...), "\n  ")
}

func messageLines(q prompt.Question, tags ...string) []string {
	lines := questionLines(q)
	if len(tags) > 0 {
		lines[len(lines)-1] += " " + strings.Join(tags, " ")
	}
	if q.Hint != "" {
		lines = append(lines, displayLines(q.Hint)...)
	}
	return lines
}

// message is formatMessage made to fit the terminal with reserve rows left
// for the prompt's options and answer (DESIGN §4 "Tall or wide text to
// approve"): at most a screenful, its first lines always, then how many
// lines were left out, then its last lines.
func (s *session) message(q prompt.Question, reserve int, tags ...string) string {
	lines := messageLines(q, tags...)
	if s.rows > 0 && s.cols > 0 {
		lines = fit(lines, s.rows-reserve-1, s.cols)
	}
	return strings.Join(lines, "\n  ")
}

// indent is the width survey's "? " (and the indent of the lines after
// the first) takes.
const indent = 2

// minRows is the fewest rows a message is given, however small the
// terminal: the first line, the count of lines left out and the last line,
// and a little more.
const minRows = 5

// fit keeps lines within rows terminal rows of cols columns, counting the
// rows a wide line wraps onto. When they do not fit, it keeps the first
// lines and the last lines, and says how many lines it left out between:
// both ends of a command stay on the screen (a harmful first line, or a
// harmful last line), so a person is never shown only the harmless part of
// it. A line too wide for its share is cut in the middle, visibly.
func fit(lines []string, rows, cols int) []string {
	rows = max(rows, minRows)
	width := max(cols-indent, 10)
	total := 0
	for _, l := range lines {
		total += rowsOf(l, width)
	}
	if total <= rows {
		return lines
	}
	// No line may take more than a quarter of the rows: a longer one is
	// cut in the middle. The first lines get half of the rows left after
	// the marker line, the last lines the rest; so both the first and the
	// last line are always shown.
	lineRows := max((rows-1)/4, 1)
	cut := make([]string, len(lines))
	for i, l := range lines {
		cut[i] = cutMiddle(l, lineRows*width)
	}
	headRows := (rows - 1) / 2
	var head, tail []string
	used, i := 0, 0
	for ; i < len(cut) && used+rowsOf(cut[i], width) <= headRows; i++ {
		head = append(head, cut[i])
		used += rowsOf(cut[i], width)
	}
	tailRows := rows - 1 - used
	used = 0
	j := len(cut) - 1
	for ; j >= i && used+rowsOf(cut[j], width) <= tailRows; j-- {
		tail = append(tail, cut[j])
		used += rowsOf(cut[j], width)
	}
	out := head
	if left := j - i + 1; left > 0 {
		out = append(out, fmt.Sprintf("… %d %s left out …", left, plural(left, "line", "lines")))
	}
	for k := len(tail) - 1; k >= 0; k-- {
		out = append(out, tail[k])
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// rowsOf is how many terminal rows of width columns line takes.
func rowsOf(line string, width int) int {
	w := textWidth(line)
	if w == 0 {
		return 1
	}
	return (w + width - 1) / width
}

// textWidth is the columns s takes: wide (East Asian) characters take two.
// s is already escaped: it holds no control characters.
func textWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// cutMiddle shortens line to about room columns, keeping its start and
// end and saying how many characters it left out.
func cutMiddle(line string, room int) string {
	runes := []rune(line)
	if textWidth(line) <= room {
		return line
	}
	marker := func(n int) string { return fmt.Sprintf(" … %d characters left out … ", n) }
	keep := max(room-len(marker(len(runes))), 8)
	headN, tailN := (keep+1)/2, keep/2
	if headN+tailN >= len(runes) {
		return line
	}
	cut := len(runes) - headN - tailN
	return string(runes[:headN]) + marker(cut) + string(runes[len(runes)-tailN:])
}

// terminalSize is the terminal's rows and columns at fd; 0, 0 when
// unknown.
func terminalSize(fd uintptr) (rows, cols int) {
	c, r, err := term.GetSize(int(fd))
	if err != nil {
		return 0, 0
	}
	return r, c
}

// summaryMessage is the message of the line survey leaves once answered.
func summaryMessage(q prompt.Question) string {
	return strings.Join(questionLines(q), "\n  ")
}

func questionLines(q prompt.Question) []string {
	var head []string
	if q.Member && q.Agent != "" {
		// Which agent asks (DESIGN §13): a sub-agent's question is not the
		// run's first agent's.
		who := "agent " + termtext.LineTerminal(q.Agent)
		if q.TaskID != "" {
			who += " (task " + termtext.LineTerminal(q.TaskID) + ")"
		}
		head = append(head, who+" asks:")
	}
	if q.Count > 1 {
		head = append(head, fmt.Sprintf("(%d of %d)", q.Index+1, q.Count))
	}
	if q.Header != "" {
		head = append(head, "["+termtext.LineTerminal(q.Header)+"]")
	}
	if q.Title != "" && q.Title != q.Message {
		head = append(head, termtext.LineTerminal(q.Title))
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
	s = strings.ReplaceAll(termtext.TextTerminal(strings.TrimRight(s, "\n")), "\t", "    ")
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
