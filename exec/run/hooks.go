package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/hooks"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/prompt"
)

// hookRun is the run's hooks (cagent's hooks: on its agents), nil when no
// agent has any.
func (r *Run) hookRun() *hooks.Run {
	if r.hooks != nil {
		return r.hooks
	}
	agents := map[string]*config.Agent{}
	any := false
	for _, a := range r.cfg.Agents {
		agents[a.Name] = a
		any = any || a.Hooks != nil
	}
	if !any {
		return nil
	}
	r.hooks = &hooks.Run{
		Runner: &hooks.Runner{Start: hookStarter{r}, SessionID: r.runID, Cwd: r.cwd()},
		Agents: agents,
		Notice: func(msg string) {
			r.notice("%s", msg)
		},
	}
	return r.hooks
}

// plainHooks runs agent's hooks of a session event (session_start,
// session_end, on_user_input), and returns what they added to the context.
func (r *Run) plainHooks(ctx context.Context, agent *config.Agent, event string, in hooks.Input) string {
	h := r.hookRun()
	if h == nil || agent.Hooks == nil || len(agent.Hooks.Plain[event]) == 0 {
		return ""
	}
	in.Event, in.Agent = event, agent.Name
	res := h.Runner.Run(ctx, agent.Hooks.Plain[event], in)
	for _, n := range res.Notices {
		r.notice("%s", n)
	}
	return res.Context
}

// hookSources is the permission_request hooks as an answer source.
func (r *Run) hookSources() []prompt.Answerer {
	if h := r.hookRun(); h != nil {
		return []prompt.Answerer{h.Permission()}
	}
	return nil
}

// hookStarter runs hook commands through the run's sandbox: /bin/sh -c,
// in the run's directory, with the environment approvers get (no model
// keys, no session key), stdin the event.
type hookStarter struct{ r *Run }

func (s hookStarter) RunHook(ctx context.Context, command string, stdin []byte) ([]byte, []byte, int, error) {
	var out, errOut hooks.Capped
	c := s.r.sandbox.Command(ctx, sandbox.Spec{
		Path: "/bin/sh", Args: []string{"-c", command}, Dir: s.r.cwd(), Env: s.r.approverEnv(),
		Stdin: bytes.NewReader(stdin), Stdout: &out, Stderr: &errOut, Class: sandbox.ClassHook, Grace: time.Second,
	})
	err := c.Run()
	if out.Over || errOut.Over {
		return nil, nil, -1, fmt.Errorf("it wrote more than %d bytes", hooks.MaxOutput)
	}
	var exit interface{ ExitCode() int }
	if errors.As(err, &exit) && exit.ExitCode() >= 0 {
		return out.Bytes(), errOut.Bytes(), exit.ExitCode(), nil
	}
	if err != nil {
		return nil, nil, -1, errors.New(sandbox.Describe(err))
	}
	return out.Bytes(), errOut.Bytes(), 0, nil
}
