package prompt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hitl-dev/hitl/internal/termtext"
)

// MaxLine is the longest answer line accepted.
const MaxLine = 1 << 20

// Line is one parsed answer line.
type Line struct {
	PromptID string
	Answer   Answer
}

var fullFormKeys = map[string]bool{"prompt_id": true, "action": true, "content": true, "text": true}

// notJSONError is an answer line that is not JSON at all.
type notJSONError struct{ err error }

func (e *notJSONError) Error() string {
	return fmt.Sprintf("not JSON (%v); answer with a JSON value such as \"staging\" or {\"action\":\"decline\"}", e.err)
}

// ParseLine parses one answer line (DESIGN §5). skip is true for a blank
// line. A leading byte-order mark and a trailing \r are dropped.
//
//	{"prompt_id":"p2","action":"accept","content":"staging"}   full form
//	{"action":"decline"}                                        the next pending question
//	{"text":"use the blue one"}                                 free text
//	"staging"                                                   any other JSON value: accept with that content
//
// An object is the full form when every key is one of prompt_id, action,
// content and text; any other object is content (a form's answer).
func ParseLine(raw []byte) (l Line, skip bool, err error) {
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	raw = bytes.TrimSuffix(raw, []byte("\r"))
	if len(bytes.TrimSpace(raw)) == 0 {
		return Line{}, true, nil
	}
	if err := ValidLine(raw); err != nil {
		return Line{}, false, err
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && len(obj) > 0 && isFullForm(obj) {
		return fullForm(obj)
	}
	return Line{Answer: Answer{Action: Accept, Content: json.RawMessage(bytes.TrimSpace(raw))}}, false, nil
}

// ValidLine checks what every answer line must be, whatever it means:
// UTF-8, one JSON value, no key given twice in an object (which one counts
// depends on who reads the line: hitl, the last, and a person or a script
// checking it, maybe the first, must never disagree about an answer).
func ValidLine(raw []byte) error {
	if !utf8.Valid(raw) {
		return errors.New("the line is not valid UTF-8")
	}
	if !json.Valid(raw) {
		var v any
		return &notJSONError{err: json.Unmarshal(raw, &v)}
	}
	if k, ok := duplicateKey(raw); ok {
		return fmt.Errorf("the key %q appears twice in one object; give it once", k)
	}
	return nil
}

// PromptIDOf reads a "prompt_id" given: a string naming a question. An
// empty one names none, and is refused rather than read as no id at all.
func PromptIDOf(v json.RawMessage) (string, error) {
	var id string
	if json.Unmarshal(v, &id) != nil {
		return "", errors.New(`"prompt_id" must be a string such as "p1"`)
	}
	if id == "" {
		return "", errors.New(`"prompt_id" is empty: name the question, such as "p1", or leave the key out`)
	}
	return id, nil
}

func isFullForm(obj map[string]json.RawMessage) bool {
	for k := range obj {
		if !fullFormKeys[k] {
			return false
		}
	}
	return true
}

func fullForm(obj map[string]json.RawMessage) (Line, bool, error) {
	var l Line
	if v, ok := obj["prompt_id"]; ok {
		id, err := PromptIDOf(v)
		if err != nil {
			return l, false, err
		}
		l.PromptID = id
	}
	action := ""
	if v, ok := obj["action"]; ok {
		if json.Unmarshal(v, &action) != nil {
			return l, false, errors.New(`"action" must be "accept", "decline" or "cancel"`)
		}
	}
	if v, ok := obj["text"]; ok {
		if json.Unmarshal(v, &l.Answer.Text) != nil {
			return l, false, errors.New(`"text" must be a string`)
		}
	}
	if v, ok := obj["content"]; ok && string(v) != "null" {
		l.Answer.Content = v
	}
	switch {
	case action == "":
		if len(l.Answer.Content) == 0 && l.Answer.Text == "" {
			return l, false, errors.New(`no "action", "content" or "text"; expected e.g. {"action":"accept","content":"staging"}`)
		}
		action = string(Accept)
	case action != string(Accept) && action != string(Decline) && action != string(Cancel):
		return l, false, fmt.Errorf("unknown action %q; expected accept, decline or cancel", action)
	}
	l.Answer.Action = Action(action)
	return l, false, nil
}

// JSONL is the front end that reads answers, one JSON line per question, from
// a stream (stdin).
type JSONL struct {
	// Notice, when set, receives human notes on stderr: where answers are
	// read from (once), and a reminder every WaitNotice while waiting.
	Notice     io.Writer
	WaitNotice time.Duration
	// TerminalHint, when set, is where a person at a terminal who asked
	// for JSON (--json) is told once that an answer line is awaited, with
	// an example: the prompt.request on stdout is otherwise followed by a
	// bare cursor.
	TerminalHint io.Writer
	// Refused, when set, is told (stderr) of each line that answers
	// nothing: it names another question, or names none while several
	// agents ask at once. The next line is read.
	Refused io.Writer

	lines  *lineReader
	line   int
	told   bool
	hinted bool
	closed bool
}

// NewJSONL reads answers from r.
func NewJSONL(r io.Reader) *JSONL {
	return &JSONL{lines: newLineReader(r), WaitNotice: 30 * time.Second}
}

// Ask reads the next answer line for q.
func (j *JSONL) Ask(ctx context.Context, q Question) (Answer, error) {
	if j.Notice != nil && !j.told {
		j.told = true
		fmt.Fprintln(j.Notice, "hitl: reading answers from stdin (JSONL); see hitl help answers")
	}
	if j.TerminalHint != nil && !j.hinted {
		j.hinted = true
		fmt.Fprintf(j.TerminalHint, "hitl: type the answer to %s as one line of JSON and press Enter (%s; {\"action\":\"decline\"} declines); see hitl help answers\n", q.ID, expectation(q))
	}
	for {
		if j.closed {
			return Answer{}, &UnansweredError{Source: SourceEOF, Reason: "end of input on stdin"}
		}
		raw, err := j.next(ctx, q)
		if err == io.EOF {
			j.closed = true
			continue
		}
		if err != nil && err != errLineTooLong {
			return Answer{}, err
		}
		j.line++
		var l Line
		skip := false
		if err == nil {
			l, skip, err = ParseLine(raw)
			var notJSON *notJSONError
			if errors.As(err, &notJSON) {
				// Say what this question takes, not a made-up example.
				err = fmt.Errorf("not JSON (%v): %s, as JSON (a string in quotes, true and false bare; {\"action\":\"decline\"} declines)", notJSON.err, expectation(q))
			}
		}
		if skip {
			continue
		}
		if err == nil {
			// The consent rule (rule.go): a line naming another question
			// answers nothing; nor does a positional line while other
			// agents' questions wait (which one it answers would be a
			// race). Neither ends the run: the next line is read.
			if why := j.unbound(ctx, q, l); why != nil {
				if j.Refused != nil {
					fmt.Fprintf(j.Refused, "hitl: answer line %d answers nothing: %v\n", j.line, why)
				}
				continue
			}
			l.Answer.Source = SourceJSONL
			var ans Answer
			if ans, err = Admit(q, Reply{Answer: l.Answer, PromptID: l.PromptID}, ""); err == nil {
				return ans, nil
			}
		}
		bad := &BadAnswerError{Where: fmt.Sprintf("answer line %d", j.line), Line: j.line, PromptID: q.ID, Reason: err.Error()}
		return Answer{}, bad
	}
}

// unbound says why line l is not bound to q (nil when it is).
func (j *JSONL) unbound(ctx context.Context, q Question, l Line) error {
	if err := Bound(q, l.PromptID, nil, ""); err != nil {
		return err
	}
	if l.PromptID == "" {
		if others := waitingOthers(ctx); len(others) > 0 {
			return fmt.Errorf("it names no prompt_id, and %s asks at once with %s (see the prompt.request events): name the question, {\"prompt_id\":%q,...}", strings.Join(others, ", "), q.ID, q.ID)
		}
	}
	return nil
}

// next waits for the next line, reminding the person every WaitNotice.
func (j *JSONL) next(ctx context.Context, q Question) ([]byte, error) {
	ch := j.lines.request()
	var tick <-chan time.Time
	if j.Notice != nil && j.WaitNotice > 0 {
		t := time.NewTicker(j.WaitNotice)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case r := <-ch:
			j.lines.done()
			return r.line, r.err
		case <-tick:
			fmt.Fprintf(j.Notice, "hitl: still waiting on stdin for an answer to %s: %s\n", q.ID, shortLine(q.Message))
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// shortLine is model text for a one-line reminder on stderr: whitespace
// runs become one space, control and bidi characters are escaped visibly
// (DESIGN §4), and it is cut at 80 characters, never inside a character.
func shortLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return termtext.Line(s)
}

// lineReader reads lines on demand in its own goroutine, so a wait can be
// abandoned when the run's context ends; the pending read is kept for the
// next request.
type lineReader struct {
	mu      sync.Mutex
	r       *bufio.Reader
	pending chan lineResult
	// inLong is set when the last line read passed MaxLine: its rest is
	// skipped by the next read (only one read is in flight at a time).
	inLong bool
}

type lineResult struct {
	line []byte
	err  error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64*1024)}
}

// request starts reading a line unless a read is already in flight.
func (lr *lineReader) request() chan lineResult {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.pending == nil {
		ch := make(chan lineResult, 1)
		lr.pending = ch
		go func() {
			line, err := lr.readLine()
			ch <- lineResult{line, err}
		}()
	}
	return lr.pending
}

func (lr *lineReader) done() {
	lr.mu.Lock()
	lr.pending = nil
	lr.mu.Unlock()
}

var errLineTooLong = fmt.Errorf("the line is longer than %d bytes", MaxLine)

// readLine reads one line of at most MaxLine bytes. A longer line is
// reported as soon as it passes the bound (a line that never ends must not
// keep hitl reading); its rest is skipped by the next read. The last line
// needs no newline.
func (lr *lineReader) readLine() ([]byte, error) {
	r := lr.r
	for lr.inLong {
		_, err := r.ReadSlice('\n')
		switch err {
		case nil:
			lr.inLong = false
		case bufio.ErrBufferFull:
		default:
			return nil, err
		}
	}
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine+2 {
			lr.inLong = err == bufio.ErrBufferFull
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch err {
		case nil:
			return bytes.TrimSuffix(line, []byte("\n")), nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if len(line) > 0 {
				return line, nil
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// duplicateKey finds a key that appears twice in one object of the JSON
// text raw (at any depth). raw must be valid JSON.
func duplicateKey(raw []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type frame struct {
		object bool
		keys   map[string]bool
		atKey  bool // the next token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				if top != nil && top.object {
					top.atKey = true // this value ends; a key comes next
				}
				stack = append(stack, &frame{object: true, keys: map[string]bool{}, atKey: true})
				continue
			case '[':
				if top != nil && top.object {
					top.atKey = true
				}
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			if top != nil && top.object && top.atKey {
				// Case twins too: Go's decoder matches a field
				// whatever its case, so "PAYLOAD" beside "payload"
				// would be read as one of them.
				k := strings.ToLower(t)
				if top.keys[k] {
					return t, true
				}
				top.keys[k] = true
				top.atKey = false
				continue
			}
		}
		if top != nil && top.object {
			top.atKey = true // a scalar value ends; a key comes next
		}
	}
}
