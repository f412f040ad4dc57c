package filesystem

import (
	"fmt"
	"strings"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/hitl-dev/hitl/termtext"
)

// What an approval shows is bounded so nothing decisive scrolls away
// (DESIGN §4): the first showHead lines, the number left out, the last
// showTail lines; a line wider than showWidth is cut with a note.
const (
	showHead  = 20
	showTail  = 20
	showWidth = 240
)

// showChange is the approval text of a write or edit: a summary line, then
// the unified diff (go-internal's anchored diff: O(n log n), already a
// dependency), escaped and shortened.
func showChange(name string, c change) string {
	path := c.tg.ruleName()
	var head []string
	switch {
	case !c.cur.exists:
		head = append(head, fmt.Sprintf("%s %s: new file, %d bytes", name, path, len(c.new)))
		if c.mkdirs != "" {
			head = append(head, "creates the directory "+c.mkdirs)
		}
	default:
		head = append(head, fmt.Sprintf("%s %s: %d bytes → %d bytes", name, path, c.cur.size, len(c.new)))
	}
	var body string
	switch {
	case c.cur.note != "":
		body = fmt.Sprintf("replaces %s (no diff shown)", c.cur.note)
		if isBinary(c.new) {
			body += fmt.Sprintf("\nthe new content is binary (%d bytes)", len(c.new))
		} else {
			body += "\nthe new content:\n" + string(c.new)
		}
	case isBinary(c.new):
		body = fmt.Sprintf("the new content is binary (%d bytes, not shown)", len(c.new))
	default:
		oldName := "a/" + path
		if !c.cur.exists {
			oldName = "/dev/null"
		}
		d := diff.Diff(oldName, c.cur.data, "b/"+path, c.new)
		if d == nil {
			body = "no change: the file already holds this content"
		} else {
			// Drop go-internal's "diff a b" line: the --- +++ lines say it.
			s := string(d)
			if i := strings.IndexByte(s, '\n'); strings.HasPrefix(s, "diff ") && i >= 0 {
				s = s[i+1:]
			}
			add, del := countChanges(s)
			head[len(head)-1] += fmt.Sprintf(" (+%d -%d lines)", add, del)
			body = s
		}
	}
	return shortenShow(strings.Join(head, "\n") + "\n" + body)
}

func countChanges(d string) (add, del int) {
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return add, del
}

// shortenShow escapes s for a terminal (control and bidi characters made
// visible, never dropped) and bounds it: at most showHead+showTail lines
// plus one saying how many were left out in between, each line at most
// showWidth bytes plus a note of how much was cut.
func shortenShow(s string) string {
	lines := strings.Split(strings.TrimRight(termtext.Text(s), "\n"), "\n")
	if len(lines) > showHead+showTail+1 {
		left := len(lines) - showHead - showTail
		kept := append([]string{}, lines[:showHead]...)
		kept = append(kept, fmt.Sprintf("… %d lines left out …", left))
		lines = append(kept, lines[len(lines)-showTail:]...)
	}
	for i, l := range lines {
		if cut, n := termtext.Shorten(l, showWidth); n > 0 {
			lines[i] = fmt.Sprintf("%s (%d more bytes on this line)", cut, n)
		}
	}
	return strings.Join(lines, "\n")
}
