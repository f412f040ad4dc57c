package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/hitl-dev/hitl/exec"
)

// Name is the tool's name.
const Name = "read_skill"

// Tool is read_skill: the whole SKILL.md of a skill of the set, read when
// called. It only reads (the files the run started with), so it never
// asks, like think.
type Tool struct {
	set *Set
}

// NewTool returns read_skill for set; nil when the set has no skill (the
// model then gets neither the tool nor the prompt section).
func NewTool(set *Set) *Tool {
	if set == nil || len(set.Skills) == 0 {
		return nil
	}
	return &Tool{set: set}
}

func (*Tool) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name:        Name,
		Description: "Read the content of a skill by name. Use this when a user's request matches an available skill.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The name of the skill to read"}},` +
			`"required":["name"],"additionalProperties":false}`),
	}
}

// Call returns the skill's file as it is now (front matter included). A
// name the set lacks is an error result, as is a file that is no longer
// the skill found at the start of the run: its path now resolves to
// another file, or its front matter no longer names it (so a file swapped
// for a symlink to a secret is never read out).
func (t *Tool) Call(_ context.Context, call exec.ToolCall) (exec.Result, error) {
	var a struct {
		Name *string `json:"name"`
	}
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return exec.Result{IsError: true, Text: fmt.Sprintf("invalid arguments: %v", err)}, nil
	}
	if a.Name == nil {
		return exec.Result{IsError: true, Text: "invalid arguments: name is required"}, nil
	}
	sk, ok := t.set.Lookup(*a.Name)
	if !ok {
		return exec.Result{IsError: true, Text: fmt.Sprintf("skill %q not found", *a.Name)}, nil
	}
	text, err := read(sk)
	if err != nil {
		return exec.Result{IsError: true, Text: fmt.Sprintf("skill %q: %v", sk.Name, err)}, nil
	}
	return exec.Result{Text: text}, nil
}

func read(sk Skill) (string, error) {
	real, err := filepath.EvalSymlinks(sk.Path)
	if err != nil {
		return "", fmt.Errorf("%s cannot be read: %v", sk.Path, unwrapPath(err))
	}
	real, _ = filepath.Abs(real)
	if real != sk.real {
		return "", fmt.Errorf("%s changed since the run started: it is now %s, not %s", sk.Path, real, sk.real)
	}
	data, err := readFile(real)
	if err != nil {
		return "", fmt.Errorf("%s: %v", sk.Path, err)
	}
	fm, err := parse(data)
	if err != nil {
		return "", fmt.Errorf("%s changed since the run started and is no longer a skill: %v", sk.Path, err)
	}
	if fm.Name != sk.Name {
		return "", fmt.Errorf("%s changed since the run started: it now names the skill %q", sk.Path, fm.Name)
	}
	return string(data), nil
}
