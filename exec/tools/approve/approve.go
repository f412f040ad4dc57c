// Package approve is Claude Code's permission prompt tool (claude -p
// --permission-prompt-tool mcp__hitl__approve, DESIGN §16): the client asks
// whether one of its own tool calls may run, with {tool_name, input,
// tool_use_id?}, and gets back the text {"behavior":"allow","updatedInput":
// INPUT} or {"behavior":"deny","message":WHY}. The question is hitl's own
// approval of that kind (a Bash command is drawn as a shell approval), so
// consent is as everywhere: only an answer naming "once" approves, nobody
// answering denies.
package approve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/prompt"
)

// Name is the tool's name.
const Name = "approve"

// Tool is approve.
type Tool struct {
	asker prompt.Questioner
	// dir is the directory the client's commands run in (its MCP roots,
	// else the server's working directory).
	dir func(context.Context) string
}

// New returns the tool; dir says where the client runs its commands.
func New(asker prompt.Questioner, dir func(context.Context) string) *Tool {
	return &Tool{asker: asker, dir: dir}
}

func (t *Tool) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name: Name,
		Description: "Ask a person whether a tool call may run (Claude Code's --permission-prompt-tool). " +
			`The result's text is {"behavior":"allow","updatedInput":INPUT} or {"behavior":"deny","message":WHY}.`,
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"tool_name":{"type":"string","minLength":1,"description":"The tool that wants to run."},` +
			`"input":{"type":"object","description":"Its input, exactly as it would run."},` +
			`"tool_use_id":{"type":"string","description":"The id of the tool call."}},` +
			`"required":["tool_name","input"]}`),
	}
}

type args struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

// decision is the result's text.
type decision struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// Call asks the person. An answer nobody gave is a deny saying so; the
// asker's errors (an interrupt, a bad answers-file entry, the client gone)
// are returned: the call is not approved either way.
func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a args
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return exec.Result{IsError: true, Text: fmt.Sprintf("invalid arguments: %v", err)}, nil
	}
	if a.ToolUseID == "" {
		a.ToolUseID = call.ID // the question still names its call
	}
	q, err := t.question(ctx, a)
	if err != nil {
		return exec.Result{IsError: true, Text: err.Error()}, nil
	}
	ans, err := t.asker.Ask(ctx, q)
	var stop *prompt.StopError
	if errors.As(err, &stop) {
		return Deny("no one answered: " + stop.Reason), nil
	}
	if err != nil {
		return exec.Result{}, err
	}
	if ans.Unanswered() {
		return Deny(fmt.Sprintf("no one answered (%s): the call was not approved", ans.Source)), nil
	}
	what := "call"
	if q.Dir != "" {
		what = "command"
	}
	ap := prompt.ApprovalOf(ans, what)
	if !ap.Approved {
		return Deny(ap.Refusal), nil
	}
	return result(decision{Behavior: "allow", UpdatedInput: a.Input}), nil
}

// Deny is the result refusing the call, with why for the client's model.
func Deny(why string) exec.Result {
	return result(decision{Behavior: "deny", Message: why})
}

func result(d decision) exec.Result {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // a command's > and & stay as they are
	_ = enc.Encode(d)
	return exec.Result{Text: strings.TrimSuffix(buf.String(), "\n")}
}

// question is the approval question of the call: a Bash command as a
// shell approval (the command, where it runs, and every other input field
// but its description), any other call as the call shown whole.
func (t *Tool) question(ctx context.Context, a args) (prompt.Question, error) {
	var input map[string]json.RawMessage
	if err := json.Unmarshal(a.Input, &input); err != nil || input == nil {
		return prompt.Question{}, errors.New("invalid arguments: input must be an object")
	}
	var q prompt.Question
	var command string
	if cmd, ok := input["command"]; a.ToolName == "Bash" && ok && json.Unmarshal(cmd, &command) == nil {
		dir := t.dir(ctx)
		extra := map[string]json.RawMessage{}
		for k, v := range input {
			if k != "command" && k != "description" {
				extra[k] = v
			}
		}
		subject, msg := command, fmt.Sprintf("Run this command?\n\n%s\n\nin %s", command, dir)
		if len(extra) > 0 {
			// What changes how it runs (a timeout, in the background,
			// outside the client's sandbox) is approved with it.
			with, _ := json.Marshal(extra)
			subject += "\n" + string(with)
			msg += "\n\nwith " + string(with)
		}
		q = prompt.ApprovalQuestion(msg, false)
		q.Subject, q.Dir = subject, dir
	} else {
		var show bytes.Buffer
		if err := json.Indent(&show, a.Input, "", "  "); err != nil {
			return prompt.Question{}, fmt.Errorf("invalid arguments: input: %v", err)
		}
		what := a.ToolName
		if server, tool, ok := mcpName(a.ToolName); ok {
			what = fmt.Sprintf("%s (MCP server %s)", tool, server)
			q.Server = server
		}
		server := q.Server
		q = prompt.ApprovalQuestion(fmt.Sprintf("Allow this call of %s?\n\n%s", what, show.String()), false)
		q.Subject, q.Server = show.String(), server
	}
	q.CallID, q.Tool = a.ToolUseID, a.ToolName
	q.Hint = "the agent asks through hitl mcp"
	return q, nil
}

// mcpName splits Claude Code's name of an MCP tool, mcp__SERVER__TOOL.
func mcpName(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	return server, tool, ok && server != "" && tool != ""
}
