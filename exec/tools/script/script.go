// Package script is cagent's script toolset: each named command of its
// shell: map becomes a tool the model can call with typed arguments.
//
// The command text is the author's and is never changed: the model's
// arguments reach it only as environment variables (cagent's ${arg} in
// cmd is then the shell's own parameter expansion, which never re-parses a
// value as shell code). Only the arguments the author declared are passed;
// one the author did not declare is refused, and a declared one the model
// leaves out is unset rather than inherited from hitl's environment.
//
// Commands run like the shell toolset's (it runs them: /bin/sh -c, a
// process group, the timeout, bounded and masked output, the model API
// keys hidden) but without asking, since the author wrote them; the run's
// gate still applies ask and deny rules that name them
// (deploy:env=production). They get no HITL_SECRET_<n> variables: only a
// command a person approved can read a secret.
package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/exec/tools/shell"
)

// Shell runs the commands.
const Shell = "/bin/sh"

// Command is one entry of the toolset's shell: map, as cagent writes it.
type Command struct {
	// Cmd is the shell command line.
	Cmd string
	// Description is shown to the model (default "Execute shell command: "
	// and Cmd).
	Description string
	// Args are the arguments' JSON Schema properties; a property without a
	// type is a string.
	Args map[string]any
	// Required names the arguments the model must give.
	Required []string
	// Env is added to the command's environment (after the toolset's).
	Env map[string]string
	// WorkingDir is where it runs, relative to BaseDir.
	WorkingDir string
	// Options names the arguments whose values may start with "-" (their
	// schema's options: true); any other refuses such a value.
	Options map[string]bool
}

// Secrets masks secret values in output (prompt.Secrets).
type Secrets interface {
	Mask(text string) string
}

// Options configure the toolset.
type Options struct {
	// Commands are the toolset's shell: map, by tool name.
	Commands map[string]Command
	// Env is the toolset's env, ${VAR} already expanded.
	Env map[string]string
	// BaseDir is --working-dir (default: the process's directory).
	BaseDir string
	// Timeout bounds a command (default shell.DefaultTimeout).
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL (default
	// shell.DefaultGrace).
	Grace time.Duration
	// Hide names variables of hitl's environment that commands must not
	// inherit (the model API keys).
	Hide []string
	// Secrets masks the output (nil: none).
	Secrets Secrets
	// Sandbox starts the commands (DESIGN §12). Without a mechanism each
	// call is an acting call a person approves (Approval).
	Sandbox *sandbox.Sandbox
}

// Toolset is the script tools.
type Toolset struct {
	opts  Options
	tools []*Tool
}

// validToolName: 1 to 64 of A-Z a-z 0-9 _ - (no regexp: compiled at
// start-up, one would cost every hitl command, version included).
func validToolName(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// validEnvName: a shell variable name, [A-Za-z_][A-Za-z0-9_]*.
func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// reserved reports variable names an argument may not set: they change how
// the shell or the dynamic loader runs code, or are hitl's own. Names are
// case-sensitive (cagent's own example has an argument env).
func reserved(name string) bool {
	switch name {
	case "PATH", "IFS", "ENV", "BASH_ENV", "CDPATH", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "GLOBIGNORE":
		return true
	}
	for _, p := range []string{"LD_", "DYLD_", "HITL_", "BASH_FUNC_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// New checks the commands and returns their tools. An error names the
// command and what is wrong (a configuration error).
func New(o Options) (*Toolset, error) {
	if len(o.Commands) == 0 {
		return nil, errors.New("shell: the script toolset needs at least one command")
	}
	if o.Timeout <= 0 {
		o.Timeout = shell.DefaultTimeout
	}
	if o.Grace <= 0 {
		o.Grace = shell.DefaultGrace
	}
	s := &Toolset{opts: o}
	for _, name := range slices.Sorted(maps.Keys(o.Commands)) {
		c := o.Commands[name]
		t, err := newTool(s, name, c)
		if err != nil {
			return nil, fmt.Errorf("shell.%s: %w", name, err)
		}
		s.tools = append(s.tools, t)
	}
	return s, nil
}

func newTool(s *Toolset, name string, c Command) (*Tool, error) {
	if !validToolName(name) {
		return nil, errors.New("a tool name has 1 to 64 letters, digits, _ or -")
	}
	if strings.TrimSpace(c.Cmd) == "" {
		return nil, errors.New("cmd is empty: give the command to run")
	}
	if strings.ContainsRune(c.Cmd, 0) {
		return nil, errors.New("cmd holds a NUL character")
	}
	props := make(map[string]any, len(c.Args))
	for arg, def := range c.Args {
		switch {
		case !validEnvName(arg):
			return nil, fmt.Errorf("args.%s: an argument reaches the command as an environment variable, so its name must be one: letters, digits and _, not starting with a digit", arg)
		case reserved(arg):
			return nil, fmt.Errorf("args.%s: the model may not set %s (it changes how commands run)", arg, arg)
		}
		if _, ok := c.Env[arg]; ok {
			return nil, fmt.Errorf("args.%s: also set in env; give it one source", arg)
		}
		if _, ok := s.opts.Env[arg]; ok {
			return nil, fmt.Errorf("args.%s: also set in the toolset's env; give it one source", arg)
		}
		p, ok := def.(map[string]any)
		if def != nil && !ok {
			return nil, fmt.Errorf("args.%s: expected a JSON Schema object such as {type: string, description: ...}", arg)
		}
		cp := maps.Clone(p)
		if cp == nil {
			cp = map[string]any{}
		}
		// options: true lets the value start with "-" (hitl's key, not
		// the model's: it is not in the schema the model sees).
		if o, ok := cp["options"]; ok {
			b, isBool := o.(bool)
			if !isBool {
				return nil, fmt.Errorf("args.%s.options: expected true or false", arg)
			}
			if b {
				if c.Options == nil {
					c.Options = map[string]bool{}
				}
				c.Options[arg] = true
			}
			delete(cp, "options")
		}
		if cp["type"] == nil {
			cp["type"] = "string"
		}
		props[arg] = cp
	}
	for _, r := range c.Required {
		if _, ok := c.Args[r]; !ok {
			return nil, fmt.Errorf("required: %q is not one of the args", r)
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(c.Required) > 0 {
		schema["required"] = c.Required
	}
	params, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	desc := c.Description
	if desc == "" {
		desc = "Execute shell command: " + c.Cmd
	}
	return &Tool{s: s, cmd: c, spec: exec.ToolSpec{Name: name, Description: desc, Parameters: params}}, nil
}

// Tools returns one tool per command, sorted by name.
func (s *Toolset) Tools() []exec.Tool {
	out := make([]exec.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t
	}
	return out
}

// Instructions is the toolset's guidance for the system prompt, as
// cagent writes it: each command, its description and its arguments.
func (s *Toolset) Instructions() string {
	var b strings.Builder
	b.WriteString("## Custom Shell Tools\n\n")
	for _, t := range s.tools {
		fmt.Fprintf(&b, "### %s\n", t.spec.Name)
		if t.cmd.Description != "" {
			fmt.Fprintf(&b, "%s\n", t.cmd.Description)
		} else {
			fmt.Fprintf(&b, "Runs: `%s`\n", t.cmd.Cmd)
		}
		for _, arg := range slices.Sorted(maps.Keys(t.cmd.Args)) {
			desc, _ := t.cmd.Args[arg].(map[string]any)["description"].(string)
			req := ""
			if slices.Contains(t.cmd.Required, arg) {
				req = " (required)"
			}
			fmt.Fprintf(&b, "- `%s`: %s%s\n", arg, desc, req)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Tool is one command.
type Tool struct {
	s    *Toolset
	cmd  Command
	spec exec.ToolSpec
}

func (t *Tool) Spec() exec.ToolSpec { return t.spec }

// Call runs the command with the arguments in its environment. Bad
// arguments are error results; so is a command that fails or times out
// (its output, then how it ended).
func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	env, unset, err := t.env(call.Arguments)
	if err != nil {
		return exec.Result{IsError: true, Text: err.Error()}, nil
	}
	o := t.s.opts
	sh := shell.New(shell.Options{
		Env: env, WorkingDir: t.cmd.WorkingDir, BaseDir: o.BaseDir, Timeout: o.Timeout, Shell: Shell,
		Grace: o.Grace, Hide: append(slices.Clone(o.Hide), unset...),
		Secrets: maskOnly{o.Secrets}, Permissions: authorWrote{},
		// The author wrote the command: it needs no approval of its own
		// (the gate asks, by Approval, where no sandbox confines it).
		Sandbox: o.Sandbox, Class: sandbox.ClassScript, Yolo: true,
	})
	line, err := json.Marshal(map[string]string{"cmd": t.cmd.Cmd})
	if err != nil {
		return exec.Result{}, err
	}
	return sh.Call(ctx, exec.ToolCall{ID: call.ID, Name: t.spec.Name, Arguments: line})
}

// Approval makes a call acting only where no sandbox confines the command
// (DESIGN §12: without one, nothing runs unasked); a person sees the
// command and the arguments it gets.
func (t *Tool) Approval(_ context.Context, call exec.ToolCall) (exec.Approval, bool, error) {
	if t.s.opts.Sandbox.AllowRulesApply() {
		return exec.Approval{}, false, nil
	}
	// The arguments as the command gets them, decoded (a JSON escape
	// shows as what it stands for), not the model's JSON text.
	env, unset, err := t.env(call.Arguments)
	if err != nil {
		return exec.Approval{}, false, err
	}
	show := "Runs: " + t.cmd.Cmd
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(t.cmd.Args)) {
		if !slices.Contains(unset, name) {
			lines = append(lines, name+"="+env[name])
		}
	}
	if len(lines) > 0 {
		show += "\nwith the arguments (as environment variables):\n" + strings.Join(lines, "\n")
	}
	return exec.Approval{Show: show, Unconfined: true}, true, nil
}

// env is the toolset's env, the command's, and the arguments given; unset
// lists the declared arguments not given (they must not be inherited).
func (t *Tool) env(raw json.RawMessage) (env map[string]string, unset []string, err error) {
	var args map[string]json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, nil, fmt.Errorf("invalid arguments: expected a JSON object: %v", err)
		}
	}
	declared := slices.Sorted(maps.Keys(t.cmd.Args))
	for _, name := range slices.Sorted(maps.Keys(args)) {
		if !slices.Contains(declared, name) {
			if len(declared) == 0 {
				return nil, nil, fmt.Errorf("invalid arguments: %s takes no arguments (got %q)", t.spec.Name, name)
			}
			return nil, nil, fmt.Errorf("invalid arguments: %q is not an argument of %s; its arguments are: %s", name, t.spec.Name, strings.Join(declared, ", "))
		}
	}
	env = map[string]string{}
	maps.Copy(env, t.s.opts.Env)
	maps.Copy(env, t.cmd.Env)
	for _, name := range declared {
		v, ok := args[name]
		if !ok || string(v) == "null" {
			if slices.Contains(t.cmd.Required, name) {
				return nil, nil, fmt.Errorf("invalid arguments: %s is required", name)
			}
			unset = append(unset, name)
			continue
		}
		s, err := value(v)
		if err != nil {
			return nil, nil, fmt.Errorf("invalid arguments: %s: %v", name, err)
		}
		if strings.HasPrefix(s, "-") && !t.cmd.Options[name] {
			// The author's command would read it as an option
			// (go test -toolexec=...), not as the value it meant.
			return nil, nil, fmt.Errorf("invalid arguments: %s starts with \"-\", which the command would take as an option; give a value that does not (its author can allow options with options: true on the argument)", name)
		}
		env[name] = s
	}
	return env, unset, nil
}

// value is an argument as the text of an environment variable: a string
// as it is, anything else as its JSON.
func value(v json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		s = string(v) // a number, a boolean, an object or an array: compact JSON
		if c, err := compact(v); err == nil {
			s = c
		}
	}
	if strings.ContainsRune(s, 0) {
		return "", errors.New("a value cannot hold a NUL character")
	}
	return s, nil
}

func compact(v json.RawMessage) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return "", err
	}
	return b.String(), nil
}

// authorWrote allows every command: the shell toolset's permission check
// is for lines the model writes; these the agent's author wrote, and the
// run's gate applies ask and deny rules to the script tool itself.
type authorWrote struct{}

func (authorWrote) Shell(string, string, map[string]any, permissions.Dialect) permissions.ShellVerdict {
	// Allowed as by a bare rule: it runs in the shell as written.
	return permissions.ShellVerdict{Verdict: permissions.Verdict{Decision: permissions.Allow}}
}

func (authorWrote) Recheck(string, []string, map[string]any) error { return nil }

// Network is never asked: the author's command runs as written
// (sandbox.ClassScript), never unasked as a checked line.
func (authorWrote) Network(string, []string, map[string]any) bool { return false }

// Allows is false: no line is run unasked as a checked line (the author's
// run as written), so there is no sandbox for those to prepare.
func (authorWrote) Allows(string) bool { return false }

// maskOnly masks output but gives commands no secret variables.
type maskOnly struct{ s Secrets }

func (maskOnly) Env() []string { return nil }

func (m maskOnly) Mask(text string) string {
	if m.s == nil {
		return text
	}
	return m.s.Mask(text)
}
