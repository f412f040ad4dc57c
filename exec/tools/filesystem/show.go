package filesystem

import (
	"fmt"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
)

// showChange is the approval text of a write or edit: a summary line, then
// the unified diff (go-internal's anchored diff: O(n log n), already a
// dependency). It is raw and whole (see showText).
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
	return showText(strings.Join(head, "\n") + "\n" + body)
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

// showText is what an approval shows, raw and whole: the front end
// escapes it and, on a terminal, shortens it so that both ends stay on the
// screen (DESIGN §4; prompt/tty's fit), and a JSONL consumer gets the full
// diff. Escaping here too would double every backslash on the terminal.
// Its size is bounded by what it shows: files over MaxFileSize are not
// diffed, and new content is the model's own argument.
func showText(s string) string {
	return strings.TrimRight(s, "\n")
}
