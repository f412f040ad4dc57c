package filesystem

import (
	"bytes"
	"context"
	"fmt"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// postEdit runs the post_edit commands whose glob matches the file tg just
// written, one after another, each in the working directory with /bin/sh
// -c, a timeout and its output captured (bounded). It returns what ran and
// what it printed, and whether one failed ("" when none matched).
func (t *Toolset) postEdit(ctx context.Context, tg target) (string, bool) {
	rel := filepath.ToSlash(tg.rel)
	var out []string
	failed := false
	for _, pe := range t.opts.PostEdit {
		if !postEditMatch(pe.Path, rel) {
			continue
		}
		text, ok := t.runPostEdit(ctx, pe.Cmd, tg.real)
		out = append(out, text)
		if !ok {
			failed = true
			break
		}
	}
	if failed {
		out[len(out)-1] += "\nThe file was written; the post-edit command failed."
	}
	return strings.Join(out, "\n"), failed
}

// postEditMatch: the glob matches the file's base name (cagent's rule) or
// its path relative to the working directory.
func postEditMatch(glob, rel string) bool {
	if ok, _ := path.Match(glob, path.Base(rel)); ok {
		return true
	}
	ok, _ := path.Match(glob, rel)
	return ok
}

func (t *Toolset) runPostEdit(ctx context.Context, line, file string) (string, bool) {
	quoted, err := quotePath(line)
	if err != nil {
		return fmt.Sprintf("post_edit did not run `%s`: %v", line, err), false
	}
	ctx, cancel := context.WithTimeout(ctx, t.opts.PostEditTimeout)
	defer cancel()
	var buf capped
	// The agent's author wrote the command: it keeps the user's write
	// access, inside the sandbox.
	cmd := t.opts.Sandbox.Command(ctx, sandbox.Spec{
		Path: "/bin/sh", Args: []string{"-c", quoted}, Dir: t.roots[0].real,
		Env: append(t.env(), "path="+file), Stdout: &buf, Stderr: &buf,
		Class: sandbox.ClassHook, Grace: 2 * time.Second,
	})
	err = cmd.Run()
	status := "exit 0"
	ok := err == nil
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		status = fmt.Sprintf("stopped after %s", t.opts.PostEditTimeout)
	case err != nil:
		status = sandbox.Describe(err)
	}
	text := fmt.Sprintf("post_edit ran `%s` (%s)", line, status)
	if o := buf.text(); o != "" {
		text += ":\n" + o
	}
	return text, ok
}

// env is hitl's environment without the variables Hide names.
func (t *Toolset) env() []string {
	hide := map[string]bool{}
	for _, h := range t.opts.Hide {
		hide[h] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !hide[name] && name != "path" {
			env = append(env, kv)
		}
	}
	return env
}

// capped keeps the first and last parts of what is written to it, at most
// maxPostEditOutput bytes in all.
type capped struct {
	head, tail []byte
	dropped    int
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	half := maxPostEditOutput / 2
	if room := half - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	c.tail = append(c.tail, p...)
	if over := len(c.tail) - half; over > 0 {
		c.dropped += over
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
	return n, nil
}

func (c *capped) text() string {
	s := string(c.head)
	if c.dropped > 0 {
		s += fmt.Sprintf("\n… %d bytes left out …\n", c.dropped)
	}
	s += string(c.tail)
	return strings.TrimRight(string(bytes.ToValidUTF8([]byte(s), []byte("?"))), "\n")
}
