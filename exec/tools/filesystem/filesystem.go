// Package filesystem is cagent's `filesystem` built-in toolset (DESIGN §11):
// nine tools with cagent's names and argument shapes. The five that read run
// without asking; the four that act (write_file, edit_file,
// create_directory, remove_directory) implement exec.Acting, so the run's
// gate applies the permission rules and asks a person, showing the change
// as a unified diff. The toolset never asks by itself.
//
// Every path is confined to the working directory and the directories the
// toolset lists, after resolving symlinks; the file operations themselves go
// through os.Root, so a symlink swapped in after the check cannot widen
// what is touched. Reads, listings and searches are bounded in size, count
// and memory, and honour the context.
package filesystem

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/exec"
)

// The tools' names (cagent's).
const (
	ReadFile           = "read_file"
	ReadMultipleFiles  = "read_multiple_files"
	ListDirectory      = "list_directory"
	DirectoryTree      = "directory_tree"
	SearchFilesContent = "search_files_content"
	WriteFile          = "write_file"
	EditFile           = "edit_file"
	CreateDirectory    = "create_directory"
	RemoveDirectory    = "remove_directory"
)

// Instructions is the toolset's guidance for the system prompt (cagent's,
// with hitl's confinement and approvals).
const Instructions = `## Filesystem Tools

- Relative paths resolve from the working directory; paths outside it (and the allowed directories) are refused
- Prefer read_multiple_files over sequential read_file calls
- Use search_files_content to locate code or text across files
- Use exclude patterns in searches to limit output
- Writes, edits and directory changes may need a person's approval; a refused change is not made`

// Bounds. A read or search never holds more than these in memory.
const (
	// MaxFileSize is the most of one file read_file returns (and the most
	// read_multiple_files returns in all); longer files are cut with a
	// note. Files larger than this are not searched, nor diffed.
	MaxFileSize = 1 << 20
	// MaxListEntries bounds list_directory's entries.
	MaxListEntries = 1000
	// MaxTreeEntries bounds directory_tree's nodes.
	MaxTreeEntries = 1000
	// MaxMatches bounds search_files_content's match lines.
	MaxMatches = 200
	// maxPaths bounds the paths of one read_multiple_files call.
	maxPaths = 1000
	// MaxResult bounds the text of a listing, tree or search result.
	MaxResult = 64 << 10
	// DefaultPostEditTimeout bounds one post_edit command.
	DefaultPostEditTimeout = 60 * time.Second
	// maxPostEditOutput is the most post_edit output kept for the result.
	maxPostEditOutput = 8 << 10
)

// PostEdit is an author-written command run after a write or edit of a file
// whose path matches Path (a glob, matched against the file's base name and
// its path relative to the working directory). The command runs with
// /bin/sh -c in the working directory; $path holds the file's absolute path.
type PostEdit struct {
	Path string
	Cmd  string
}

// Secrets masks secret answers in results (prompt.Secrets).
type Secrets interface {
	Mask(text string) string
}

// Options configure the toolset.
type Options struct {
	// WorkingDir is the directory paths are relative to and confined to
	// (default: the process's directory).
	WorkingDir string
	// AllowedDirs are further directories the toolset may touch (relative
	// to WorkingDir or absolute).
	AllowedDirs []string
	// IgnoreVCS hides .git and files ignored by .gitignore from listings,
	// trees and searches (the config's default is true).
	IgnoreVCS bool
	// PostEdit commands run after a matching write or edit.
	PostEdit []PostEdit
	// PostEditTimeout bounds one post_edit command (default 60 s).
	PostEditTimeout time.Duration
	// Hide names variables of hitl's environment post_edit commands do not
	// inherit (the model API keys).
	Hide []string
	// Secrets masks every result (nil: nothing to mask).
	Secrets Secrets
	// Sandbox starts the post_edit commands (DESIGN §12).
	Sandbox *sandbox.Sandbox
	// Hidden are the paths hidden from what runs unasked (Hidden): a call
	// that reads or changes one is asked whatever the rules allow, and
	// trees and searches from outside leave them out.
	Hidden []Hidden
}

// Toolset is the filesystem toolset.
type Toolset struct {
	opts  Options
	roots []*root
	err   error // why no root could be opened; every call reports it

	mu       sync.Mutex
	approved map[string]approvedState // call ID → the file content a person saw
}

// New returns the toolset. A working directory or allowed directory that
// cannot be opened is reported by every call (as an error result), not here.
func New(o Options) *Toolset {
	if o.PostEditTimeout <= 0 {
		o.PostEditTimeout = DefaultPostEditTimeout
	}
	t := &Toolset{opts: o, approved: map[string]approvedState{}}
	t.roots, t.err = openRoots(o.WorkingDir, o.AllowedDirs)
	return t
}

// Close releases the directories the toolset holds open.
func (t *Toolset) Close() error {
	for _, r := range t.roots {
		r.os.Close()
	}
	return nil
}

// Tools returns the nine tools, reads first.
func (t *Toolset) Tools() []exec.Tool {
	return []exec.Tool{
		&readTool{t: t, name: ReadFile},
		&readTool{t: t, name: ReadMultipleFiles},
		&readTool{t: t, name: ListDirectory},
		&readTool{t: t, name: DirectoryTree},
		&readTool{t: t, name: SearchFilesContent},
		&actTool{t: t, name: WriteFile},
		&actTool{t: t, name: EditFile},
		&actTool{t: t, name: CreateDirectory},
		&actTool{t: t, name: RemoveDirectory},
	}
}

// readTool is a tool that only reads: it runs without asking, but for a
// path hidden from what runs unasked.
type readTool struct {
	t    *Toolset
	name string
}

var _ exec.Acting = (*readTool)(nil)

// Approval asks for a call that names a hidden path (Options.Hidden), or
// one in it; every other read runs unasked (ok false).
func (r *readTool) Approval(ctx context.Context, call exec.ToolCall) (exec.Approval, bool, error) {
	if r.t.err != nil {
		return exec.Approval{}, false, nil // the call reports it
	}
	why := r.t.hiddenIn(call.Arguments, r.dirPath())
	if why == "" {
		return exec.Approval{}, false, nil
	}
	return exec.Approval{Args: r.RuleArgs(call), Hidden: why}, true, nil
}

func (r *readTool) Spec() exec.ToolSpec { return spec(r.name) }

func (r *readTool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	if r.t.err != nil {
		return errorResult("%v", r.t.err), nil
	}
	var (
		res exec.Result
		err error
	)
	switch r.name {
	case ReadFile:
		res, err = r.t.readFile(ctx, call.Arguments)
	case ReadMultipleFiles:
		res, err = r.t.readMultipleFiles(ctx, call.Arguments)
	case ListDirectory:
		res, err = r.t.listDirectory(ctx, call.Arguments)
	case DirectoryTree:
		res, err = r.t.directoryTree(ctx, call.Arguments)
	case SearchFilesContent:
		res, err = r.t.searchFilesContent(ctx, call.Arguments)
	default:
		return errorResult("unknown filesystem tool %q", r.name), nil
	}
	return r.t.mask(res), err
}

// RuleArgs are the call's arguments as permission rules judge them: each
// path (path, paths) as ruleName names it — where the read really lands,
// "./" and "x/../" gone, symlinks resolved — so a deny or ask rule for
// .git/* is not passed by ./.git/config or a symlink to .git. A path
// that does not resolve is left as given (the read refuses it). Nil when
// the arguments are not an object.
func (r *readTool) RuleArgs(call exec.ToolCall) map[string]any {
	return r.t.ruleArgs(call, r.dirPath())
}

// dirPath says whether the tool's path names a directory, the working
// directory when empty (the listings, trees and searches).
func (r *readTool) dirPath() bool { return r.name != ReadFile && r.name != ReadMultipleFiles }

// ruleArgs are a call's arguments with each path (path, paths) as ruleName
// names it (RuleArgs); an empty path is the working directory where dir is
// set.
func (t *Toolset) ruleArgs(call exec.ToolCall, dir bool) map[string]any {
	var args map[string]any
	if json.Unmarshal(call.Arguments, &args) != nil || args == nil || t.err != nil {
		return nil
	}
	name := func(v any, dir bool) any {
		p, ok := v.(string)
		if !ok {
			return v
		}
		if p == "" && dir {
			p = "."
		}
		if p == "" {
			return v
		}
		tg, err := t.resolve(p)
		if err != nil {
			return v
		}
		return tg.ruleName()
	}
	if v, ok := args["path"]; ok {
		args["path"] = name(v, dir)
	}
	if list, ok := args["paths"].([]any); ok {
		out := make([]any, len(list))
		for i, v := range list {
			out[i] = name(v, false)
		}
		args["paths"] = out
	}
	return args
}

// actTool is a tool that changes files: exec.Acting.
type actTool struct {
	t    *Toolset
	name string
}

var _ exec.Acting = (*actTool)(nil)

func (a *actTool) Spec() exec.ToolSpec { return spec(a.name) }

// Approval says what the call changes. Every call of these tools needs
// approval unless a rule allows it. Bad arguments, a path outside the
// allowed directories, an edit whose text is not found: an error for the
// model, nothing is asked.
func (a *actTool) Approval(ctx context.Context, call exec.ToolCall) (exec.Approval, bool, error) {
	if a.t.err != nil {
		return exec.Approval{}, false, a.t.err
	}
	var (
		ap  exec.Approval
		err error
	)
	switch a.name {
	case WriteFile, EditFile:
		ap, err = a.t.changeApproval(call, a.name)
	case CreateDirectory:
		ap, err = a.t.createDirApproval(call.Arguments)
	case RemoveDirectory:
		ap, err = a.t.removeDirApproval(call.Arguments)
	default:
		err = fmt.Errorf("unknown filesystem tool %q", a.name)
	}
	if hidden := a.t.hiddenIn(call.Arguments, false); hidden != "" {
		// Asked, showing only what the model sent: not the diff, nor
		// an error (an edit's text not found, a directory's entries),
		// which tell what the hidden path holds. The question is kept
		// (the journal, events, approvers): it must not carry that
		// either. The model learns the error once a person approved.
		if err != nil {
			ap = exec.Approval{Args: a.t.ruleArgs(call, false)}
		}
		ap.Show = fmt.Sprintf("%s %s\n\n(what it changes is hidden: no diff is shown)", a.name, call.Arguments)
		ap.Hidden = hidden
		return ap, true, nil
	}
	if err != nil {
		return exec.Approval{}, false, err
	}
	return ap, true, nil
}

func (a *actTool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	if a.t.err != nil {
		return errorResult("%v", a.t.err), nil
	}
	var (
		res exec.Result
		err error
	)
	switch a.name {
	case WriteFile:
		res, err = a.t.writeFile(ctx, call)
	case EditFile:
		res, err = a.t.editFile(ctx, call)
	case CreateDirectory:
		res, err = a.t.createDirectory(call.Arguments)
	case RemoveDirectory:
		res, err = a.t.removeDirectory(call.Arguments)
	default:
		return errorResult("unknown filesystem tool %q", a.name), nil
	}
	return a.t.mask(res), err
}

func (t *Toolset) mask(r exec.Result) exec.Result {
	if t.opts.Secrets != nil {
		r.Text = t.opts.Secrets.Mask(r.Text)
	}
	return r
}

func errorResult(format string, args ...any) exec.Result {
	return exec.Result{IsError: true, Text: fmt.Sprintf(format, args...)}
}

// decode reads a call's arguments into v, strictly typed.
func decode(raw json.RawMessage, v any) error {
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

// displayPath is how results name a path the model gave: as given, "."
// for empty.
func displayPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func wd(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	return filepath.Abs(dir)
}
