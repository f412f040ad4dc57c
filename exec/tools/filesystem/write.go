package filesystem

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hitl-dev/hitl/exec"
)

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type edit struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

type editArgs struct {
	Path  string `json:"path"`
	Edits []edit `json:"edits"`
}

type pathsArgs struct {
	Paths []string `json:"paths"`
}

// approvedState is the file a person saw the diff against: a call whose
// file changed between the approval and the write is refused, so what is
// written is always the change that was shown.
type approvedState struct {
	where  string // the path as rules saw it
	exists bool
	sum    [32]byte
}

// maxApproved bounds the approvals remembered (declined calls never reach
// Call, which forgets its own).
const maxApproved = 1024

// current is a file as it is now, before a change.
type current struct {
	exists bool
	data   []byte
	mode   fs.FileMode
	size   int64
	note   string // why data is not text (binary, too large), "" if it is
}

func (c change) state() approvedState {
	return approvedState{where: c.tg.ruleName(), exists: c.cur.exists, sum: sha256.Sum256(c.cur.data)}
}

// readCurrent reads the file tg names as it is now: missing is fine (a new
// file); a directory or anything but a regular file is an error.
func (tg target) readCurrent() (current, error) {
	if err := tg.notSymlink(); err != nil {
		return current{}, err
	}
	f, err := tg.root.os.OpenFile(tg.rel, os.O_RDONLY|syscall.O_NONBLOCK|oNoFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return current{mode: 0o644}, nil
	}
	if err != nil {
		return current{}, tg.opError(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return current{}, err
	}
	if st.IsDir() {
		return current{}, fmt.Errorf("%s is a directory", tg.given)
	}
	if !st.Mode().IsRegular() {
		return current{}, fmt.Errorf("%s is not a regular file (%s)", tg.given, st.Mode().Type())
	}
	c := current{exists: true, mode: st.Mode().Perm(), size: st.Size()}
	if st.Size() > MaxFileSize {
		c.note = fmt.Sprintf("a file of %d bytes, larger than %s", st.Size(), sizeText(MaxFileSize))
		// Hash it all, so a change after the approval is still seen.
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return current{}, fmt.Errorf("reading %s: %w", tg.given, err)
		}
		c.data = h.Sum(nil)
		return c, nil
	}
	c.data, err = io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return current{}, fmt.Errorf("reading %s: %w", tg.given, err)
	}
	if isBinary(c.data) {
		c.note = fmt.Sprintf("a binary file of %d bytes", len(c.data))
	}
	return c, nil
}

// change is what a write or edit would do to one file.
type change struct {
	tg       target
	cur      current
	new      []byte
	mkdirs   string // parent directories the write creates ("" none)
	summary  string // for the result
	editNote []string
}

// plan works out a write or edit without doing it.
func (t *Toolset) plan(name string, raw json.RawMessage) (change, error) {
	var (
		p     string
		wa    writeArgs
		ea    editArgs
		isNew bool
	)
	switch name {
	case WriteFile:
		if err := decode(raw, &wa); err != nil {
			return change{}, err
		}
		p, isNew = wa.Path, true
	default:
		if err := decode(raw, &ea); err != nil {
			return change{}, err
		}
		p = ea.Path
		if len(ea.Edits) == 0 {
			return change{}, errors.New("edits is empty: give at least one {oldText, newText}")
		}
	}
	if p == "" {
		return change{}, errors.New("path is empty: give the file to change")
	}
	tg, err := t.resolve(p)
	if err != nil {
		return change{}, err
	}
	if tg.rel == "." {
		return change{}, fmt.Errorf("%s is a directory", p)
	}
	cur, err := tg.readCurrent()
	if err != nil {
		return change{}, err
	}
	c := change{tg: tg, cur: cur}
	if isNew {
		c.new = []byte(wa.Content)
		c.summary = fmt.Sprintf("File written successfully: %s (%d bytes)", p, len(wa.Content))
		if !cur.exists {
			c.mkdirs = missingParents(tg)
		}
		return c, nil
	}
	if !cur.exists {
		return change{}, fmt.Errorf("Error reading file: %s: not found", p)
	}
	if cur.note != "" {
		return change{}, fmt.Errorf("%s is %s: edit_file changes text files only", p, cur.note)
	}
	text := string(cur.data)
	for i, e := range ea.Edits {
		if e.OldText == "" {
			return change{}, fmt.Errorf("Edit %d failed: oldText is empty", i+1)
		}
		if !strings.Contains(text, e.OldText) {
			return change{}, fmt.Errorf("Edit %d failed: old text not found", i+1)
		}
		text = strings.Replace(text, e.OldText, e.NewText, 1)
		c.editNote = append(c.editNote, fmt.Sprintf("Edit %d: Replaced %d characters", i+1, len(e.OldText)))
	}
	c.new = []byte(text)
	if len(c.editNote) == 1 {
		c.summary = "File edited successfully. " + strings.TrimPrefix(c.editNote[0], "Edit 1: ")
	} else {
		c.summary = "File edited successfully. Changes:\n" + strings.Join(c.editNote, "\n")
	}
	return c, nil
}

// missingParents names the parent directories of tg that do not exist yet.
func missingParents(tg target) string {
	var missing []string
	for d := filepath.Dir(tg.rel); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if _, err := tg.root.os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	if len(missing) == 0 {
		return ""
	}
	top := missing[len(missing)-1]
	if tg.root.main {
		return filepath.ToSlash(top)
	}
	return filepath.Join(tg.root.real, top)
}

func (t *Toolset) changeApproval(call exec.ToolCall, name string) (exec.Approval, error) {
	c, err := t.plan(name, call.Arguments)
	if err != nil {
		return exec.Approval{}, err
	}
	t.remember(call.ID, c.state())
	return exec.Approval{
		Args: ruleArgs(call.Arguments, "path", c.tg.ruleName()),
		Show: showChange(name, c),
		// Empty: each change is its own diff; approving one write to a
		// path must never let a later, unseen write through.
		SessionKey: "",
	}, nil
}

func (t *Toolset) remember(id string, s approvedState) {
	if id == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.approved) >= maxApproved {
		for k := range t.approved {
			delete(t.approved, k)
			if len(t.approved) < maxApproved/2 {
				break
			}
		}
	}
	t.approved[id] = s
}

func (t *Toolset) forget(id string) (approvedState, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.approved[id]
	delete(t.approved, id)
	return s, ok
}

func (t *Toolset) writeFile(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	return t.applyChange(ctx, call, WriteFile)
}

func (t *Toolset) editFile(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	return t.applyChange(ctx, call, EditFile)
}

func (t *Toolset) applyChange(ctx context.Context, call exec.ToolCall, name string) (exec.Result, error) {
	c, err := t.plan(name, call.Arguments)
	saw, approved := t.forget(call.ID)
	if err != nil {
		return errorResult("%v", err), nil
	}
	if approved && saw.where != c.tg.ruleName() {
		return errorResult("%s now leads to %s, not to %s as when its change was approved (a symlink changed); nothing was written", c.tg.given, c.tg.ruleName(), saw.where), nil
	}
	if approved && saw != c.state() {
		return errorResult("%s changed after its change was approved; nothing was written. Read it again and make the change anew", c.tg.given), nil
	}
	if err := ctx.Err(); err != nil {
		return exec.Result{}, err
	}
	if err := c.tg.writeAtomic(c.new, c.cur.mode); err != nil {
		return errorResult("Error writing file: %v", err), nil
	}
	res := exec.Result{Text: c.summary}
	if out, failed := t.postEdit(ctx, c.tg); out != "" {
		res.Text += "\n" + out
		res.IsError = failed
	}
	return res, nil
}

// writeAtomic writes data to a new file beside tg and renames it over tg,
// through the root: a symlink or a hard link at tg is replaced, never
// written through, and no parent swapped for a symlink leads out.
func (tg target) writeAtomic(data []byte, mode fs.FileMode) error {
	r := tg.root.os
	dir := filepath.Dir(tg.rel)
	if dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return tg.opError(err)
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+filepath.Base(tg.rel)+".hitl-"+hex.EncodeToString(rnd[:]))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, mode)
	if err != nil {
		return tg.opError(err)
	}
	_, werr := f.Write(data)
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = r.Chmod(tmp, mode) // the umask may have narrowed it
	}
	if werr == nil {
		werr = r.Rename(tmp, tg.rel)
	}
	if werr != nil {
		_ = r.Remove(tmp)
		return tg.opError(werr)
	}
	return nil
}

func (t *Toolset) resolveAll(raw json.RawMessage, what string) ([]target, error) {
	var a pathsArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	if len(a.Paths) == 0 {
		return nil, fmt.Errorf("paths is empty: give the directories to %s", what)
	}
	var tgs []target
	for _, p := range a.Paths {
		if p == "" {
			return nil, errors.New("paths holds an empty path")
		}
		tg, err := t.resolve(p)
		if err != nil {
			return nil, err
		}
		tgs = append(tgs, tg)
	}
	return tgs, nil
}

// ruleArgs are a call's arguments as rules judge them: every argument the
// model gave (a rule on write_file's content applies), with key set to
// where the change really lands.
func ruleArgs(raw json.RawMessage, key string, v any) map[string]any {
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil || args == nil {
		args = map[string]any{}
	}
	args[key] = v
	return args
}

func ruleNames(tgs []target) []any {
	names := make([]any, len(tgs))
	for i, tg := range tgs {
		names[i] = tg.ruleName()
	}
	return names
}

func (t *Toolset) createDirApproval(raw json.RawMessage) (exec.Approval, error) {
	tgs, err := t.resolveAll(raw, "create")
	if err != nil {
		return exec.Approval{}, err
	}
	names := ruleNames(tgs)
	var lines []string
	for i, tg := range tgs {
		state := "new"
		if st, err := tg.root.os.Stat(tg.rel); err == nil {
			state = "exists already"
			if !st.IsDir() {
				return exec.Approval{}, fmt.Errorf("%s exists and is not a directory", tg.given)
			}
		}
		lines = append(lines, fmt.Sprintf("  %s (%s)", names[i], state))
	}
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = n.(string)
	}
	return exec.Approval{
		Args: ruleArgs(raw, "paths", names),
		Show: showText("create directories:\n" + strings.Join(lines, "\n")),
		// Making the same directories again changes nothing: a person may
		// approve them for the session.
		SessionKey: CreateDirectory + "\x00" + strings.Join(keys, "\x00"),
	}, nil
}

func (t *Toolset) createDirectory(raw json.RawMessage) (exec.Result, error) {
	tgs, err := t.resolveAll(raw, "create")
	if err != nil {
		return errorResult("%v", err), nil
	}
	var done []string
	for _, tg := range tgs {
		if err := tg.root.os.MkdirAll(tg.rel, 0o755); err != nil {
			return errorResult("%sError creating directory %s: %v", doneText(done), tg.given, tg.opError(err)), nil
		}
		done = append(done, "Directory created successfully: "+tg.given)
	}
	return exec.Result{Text: strings.Join(done, "\n")}, nil
}

func doneText(done []string) string {
	if len(done) == 0 {
		return ""
	}
	return strings.Join(done, "\n") + "\n"
}

func (t *Toolset) removeDirApproval(raw json.RawMessage) (exec.Approval, error) {
	tgs, err := t.resolveAll(raw, "remove")
	if err != nil {
		return exec.Approval{}, err
	}
	names := ruleNames(tgs)
	var lines []string
	for i, tg := range tgs {
		if err := tg.checkRemovable(); err != nil {
			return exec.Approval{}, err
		}
		lines = append(lines, fmt.Sprintf("  %s (empty)", names[i]))
	}
	return exec.Approval{
		Args: ruleArgs(raw, "paths", names),
		Show: showText("remove empty directories:\n" + strings.Join(lines, "\n")),
	}, nil
}

// checkRemovable: an existing, empty directory that is not a root.
func (tg target) checkRemovable() error {
	if tg.rel == "." {
		return fmt.Errorf("%s is the working directory (or one the toolset lists): it cannot be removed", tg.given)
	}
	st, err := tg.root.os.Lstat(tg.rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: no such directory", tg.given)
		}
		return tg.opError(err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", tg.given)
	}
	d, err := tg.root.os.Open(tg.rel)
	if err != nil {
		return tg.opError(err)
	}
	defer d.Close()
	names, _ := d.Readdirnames(6)
	if len(names) > 0 {
		shown := strings.Join(names[:min(5, len(names))], ", ")
		if len(names) > 5 {
			shown += ", …"
		}
		return fmt.Errorf("%s is not empty (it holds %s): remove_directory removes only empty directories", tg.given, shown)
	}
	return nil
}

func (t *Toolset) removeDirectory(raw json.RawMessage) (exec.Result, error) {
	tgs, err := t.resolveAll(raw, "remove")
	if err != nil {
		return errorResult("%v", err), nil
	}
	var done []string
	for _, tg := range tgs {
		if tg.rel == "." {
			return errorResult("%s%s is the working directory (or one the toolset lists): it cannot be removed", doneText(done), tg.given), nil
		}
		if err := rmdir(tg.root.os, tg.rel); err != nil {
			return errorResult("%sError removing directory %s: %v", doneText(done), tg.given, tg.opError(err)), nil
		}
		done = append(done, "Directory removed successfully: "+tg.given)
	}
	return exec.Result{Text: strings.Join(done, "\n")}, nil
}
