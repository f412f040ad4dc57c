package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/hitl-dev/hitl/prompt"
)

// jsonSink writes each event as one JSON line, the moment it happens.
type jsonSink struct {
	mu  sync.Mutex
	w   io.Writer
	err error // the first write error (a closed stdout)
	// onBroken, when set, is called on the first write error: nobody reads
	// the events any more, so the run must not go on.
	onBroken func()
}

// broken reports whether a write failed (nobody reads the events).
func (s *jsonSink) broken() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err != nil
}

func (s *jsonSink) Emit(e exec.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Encode without HTML escaping: commands with > or & stay readable.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		buf.Reset()
		_ = enc.Encode(map[string]string{"type": "error", "message": "cannot encode event: " + err.Error()})
	}
	if _, err := s.w.Write(buf.Bytes()); err != nil && s.err == nil {
		s.err = err
		if s.onBroken != nil {
			s.onBroken()
		}
	}
}

// humanSink renders events for a person: the final answer on stdout, progress
// on stderr (unless quiet). Model text is escaped before it is drawn.
type humanSink struct {
	mu        sync.Mutex
	out, err  io.Writer
	quiet     bool
	outIsTTY  bool
	outErr    error
	first     string // the run's first agent: events of others name theirs
	finalText bool
	// showQuestions prints questions and answers on stderr (not when the
	// terminal front end draws them).
	showQuestions bool
	// spin, when set, shows a running tool call with its elapsed time
	// (stopped while anything else is written or a question is asked).
	spin *spinner
	// running is the tool call in flight, and since when.
	running      string
	runningSince time.Time
	// asking counts the calls in flight of tools that ask a person, while
	// the terminal draws questions (!showQuestions); undrawn are their
	// questions, until answered.
	asking  int
	undrawn map[string]*prompt.Question
}

const maxShown = 300

func (s *humanSink) Emit(e exec.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := e.(type) {
	case *exec.MessageEvent:
		if e.Final {
			text := e.Text
			if s.outIsTTY {
				text = termtext.Text(text)
			}
			if _, err := fmt.Fprintln(s.out, strings.TrimRight(text, "\n")); err != nil && s.outErr == nil {
				s.outErr = err
			}
			s.finalText = true
			return
		}
		s.progress("%s%s\n", s.who(e.Agent, e.TaskID), termtext.Text(strings.TrimRight(e.Text, "\n")))
	case *exec.RunStarted:
		s.first = e.Agent
	case *exec.ToolCallEvent:
		if e.Asks && !s.showQuestions {
			// The terminal draws the question; its arguments are the
			// question, so the line only names the tool.
			s.asking++
			s.progress("%s→ %s\n", s.who(e.Agent, e.TaskID), termtext.Line(e.Name))
		} else {
			s.progress("%s→ %s %s\n", s.who(e.Agent, e.TaskID), termtext.Line(e.Name), termtext.JSON(shorten(string(e.Arguments), maxShown)))
		}
		s.running, s.runningSince = termtext.Line(e.Name), time.Now()
		s.spinTool()
	case *exec.ToolResultEvent:
		s.running = ""
		s.asking = max(s.asking-1, 0)
		label := ""
		if e.IsError {
			label = "error: "
		}
		s.progress("%s← %s: %s%s\n", s.who(e.Agent, e.TaskID), termtext.Line(e.Name), label, resultLines(shorten(e.Result, maxShown)))
	case *exec.PromptRequest:
		s.spin.Stop() // the question is drawn now
		if s.showQuestions {
			s.question(&e.Question)
		} else if s.asking > 0 {
			if s.undrawn == nil {
				s.undrawn = map[string]*prompt.Question{}
			}
			s.undrawn[e.Question.ID] = &e.Question
		}
	case *exec.PromptAnswer:
		q := s.undrawn[e.PromptID]
		delete(s.undrawn, e.PromptID)
		switch {
		case s.showQuestions:
			s.progress("  answer %s (%s): %s\n", e.PromptID, e.Source, describeAnswer(e))
		case q != nil && !drawnBy(e.Source):
			// Answered before the terminal drew it (the answers file,
			// the session, a hook, an approver): the tool.call line
			// did not show it, so it is shown here.
			s.question(q)
			s.progress("  answer %s (%s): %s\n", e.PromptID, e.Source, describeAnswer(e))
		}
		// The call goes on: what it runs starts now, not when it was
		// asked, so the time a question waited is not counted.
		if s.running != "" {
			s.runningSince = time.Now()
		}
		s.spinTool()
	case *exec.ErrorEvent:
		// errors are printed once by Main
	}
}

// drawnBy reports whether an answer of source comes from the terminal's
// drawing of the question (its answer, or its end unanswered).
func drawnBy(source prompt.Source) bool {
	switch source {
	case prompt.SourceTTY, prompt.SourceTimeout, prompt.SourceEOF, prompt.SourcePolicy, prompt.SourceDefault:
		return true
	}
	return false
}

// progressFunc returns how tools show progress to a person: a line on
// stderr in human mode, nothing with --json.
func progressFunc(sink exec.Sink) func(string) {
	hs, ok := sink.(*humanSink)
	if !ok {
		return nil
	}
	return func(msg string) {
		hs.mu.Lock()
		defer hs.mu.Unlock()
		hs.progress("hitl: %s\n", termtext.Line(msg))
	}
}

func (s *humanSink) progress(format string, args ...any) {
	s.spin.Stop()
	if !s.quiet {
		fmt.Fprintf(s.err, format, args...)
	}
}

// spinTool shows the tool call in flight, if any, with its elapsed time.
func (s *humanSink) spinTool() {
	if s.spin != nil && s.running != "" {
		s.spin.StartTool(s.running, s.runningSince)
	}
}

// resultLines is a tool result as progress shows it: a result of several
// lines is drawn as lines (not as \x0a), each escaped like any text a
// model can reach, the next ones indented behind a gutter so a result can
// never pass for a line of hitl's own (a question, an answer).
func resultLines(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = termtext.Line(l)
	}
	return strings.Join(lines, "\n  │ ")
}

func shorten(s string, n int) string {
	short, cut := termtext.Shorten(strings.TrimSpace(s), n)
	if cut == 0 {
		return short
	}
	return fmt.Sprintf("%s (%d more bytes)", short, cut)
}

// question prints a question for a CI log or a person answering on stdin.
// who names an agent other than the run's first (DESIGN §13) before
// what it does: "[reviewer] ", "[researcher agent_task_x] ".
func (s *humanSink) who(agent, task string) string {
	if agent == "" || agent == s.first && task == "" {
		return ""
	}
	if task != "" {
		return "[" + termtext.Line(agent) + " " + termtext.Line(task) + "] "
	}
	return "[" + termtext.Line(agent) + "] "
}

func (s *humanSink) question(q *prompt.Question) {
	where := ""
	if q.Count > 1 {
		where = fmt.Sprintf(" (%d of %d)", q.Index+1, q.Count)
	}
	title := q.Title
	if q.Header != "" {
		title = q.Header
	}
	if title != "" {
		title = "[" + termtext.Line(title) + "] "
	}
	s.progress("? %s%s%s%s [%s, %s]\n", s.who(q.Agent, q.TaskID), title, termtext.Text(q.Message), where, q.ID, q.Kind)
	if q.Hint != "" {
		s.progress("  %s\n", termtext.Text(q.Hint))
	}
	for i, o := range q.Options {
		line := fmt.Sprintf("  %d. %s", i, termtext.Line(o.Label))
		if o.ID != o.Label {
			line += fmt.Sprintf(" (id %s)", termtext.Line(o.ID))
		}
		if o.Description != "" {
			line += " - " + termtext.Line(o.Description)
		}
		s.progress("%s\n", line)
	}
	for _, f := range q.Fields {
		s.progress("  field %s (%s)\n", termtext.Line(f.Name), f.Question.Kind)
	}
}

func describeAnswer(e *exec.PromptAnswer) string {
	switch {
	case e.Action != prompt.Accept:
		return string(e.Action)
	case e.Text != "":
		return "text " + termtext.Line(shorten(e.Text, maxShown))
	}
	return termtext.Line(shorten(string(e.Content), maxShown))
}
