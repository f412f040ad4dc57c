package run

// The agents of a team (DESIGN §13): sub-agents run by transfer_task and
// background agents each run their own conversation (a frame of the
// journal) with their own instruction, model and tools, and the run's one
// question path, permissions, approvals and sandbox; a handoff switches
// the conversation to another agent.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/exec/tools"
	"github.com/hitl-dev/hitl/exec/tools/team"
	"github.com/hitl-dev/hitl/prompt"
)

// members is what the agents of a run share, set up by Do.
type members struct {
	asker  *prompt.Asker
	shared *tools.Shared
	// stop ends the run with an error of a background agent (its
	// question nobody answered).
	stop context.CancelCauseFunc
	ctx  context.Context

	closes closers // the tools of every member built, closed when the run ends

	mu sync.Mutex
	// tasksTaken: the background tasks of a resumed run went to the first
	// toolset built; no other starts them again.
	tasksTaken bool
}

func (m *members) onClose(f func()) { m.closes.add(f) }

func (m *members) closeAll() { m.closes.closeAll() }

// activeAgent is the agent the run's conversation is with: the last one
// handed off to (a resumed run), else the run's first.
func (r *Run) activeAgent() *config.Agent {
	for i := len(r.state.Messages) - 1; i >= 0; i-- {
		if h := r.state.Messages[i].Handoff; h != "" {
			if a := r.cfg.Agent(h); a != nil {
				return a
			}
		}
	}
	return r.agent
}

// modelFor makes agent's model for frame, restoring its position from the
// session. The run's first agent takes --model (opts.Model).
func (r *Run) modelFor(a *config.Agent, frame, first string) (exec.Model, session.Stateful, error) {
	cm := a.Model
	if frame == "" && a.Name == r.agent.Name && r.opts.Model != nil {
		cm = r.opts.Model
	}
	if cm == nil {
		return nil, nil, fmt.Errorf("agent %s has no model", a.Name)
	}
	mo := model.Options{Getenv: r.opts.Getenv, Message: first, Cassette: r.opts.Cassette, OnDelta: r.opts.OnDelta, Sandbox: r.runSandbox, Track: r.track}
	m, err := model.New(cm, mo)
	if err != nil {
		return nil, nil, err
	}
	if models, order := otherModels(a); len(order) > 0 {
		sw, err := model.NewSwitch(m, models, order, mo)
		if err != nil {
			return nil, nil, fmt.Errorf("agent %s: %w", a.Name, err)
		}
		m = sw
	}
	stateful, _ := m.(session.Stateful)
	if stateful != nil && r.loaded != nil {
		saved, ok := r.loaded.ModelStates[session.ModelKey(frame, a.Name)]
		if !ok && frame == "" && a.Name == r.agent.Name {
			saved = r.loaded.ModelState // a session from before agents were recorded
		}
		if len(saved) > 0 {
			if err := stateful.Restore(saved); err != nil {
				return nil, nil, fmt.Errorf("session %s: model state of agent %s: %w", r.journal.Path(), a.Name, err)
			}
		}
	}
	var out exec.Model = m
	if r.opts.WrapModel != nil {
		out = r.opts.WrapModel(m)
	}
	return out, stateful, nil
}

// member builds agent a's part of the run: its system prompt and tools
// (MCP servers started), its model made by the caller. closeTools stops
// what its tools hold.
func (r *Run) member(ctx context.Context, a *config.Agent, m exec.Model, stateful session.Stateful, chain []string) (_ exec.Member, closeTools func(), _ error) {
	deps := r.toolDeps(r.team.asker, chain)
	if a.Skills {
		deps.Skills = r.skillSet()
	}
	if sw, ok := stateful.(*model.Switch); ok {
		deps.ToolModels = sw.Tools
	}
	list, deferral, closeTools, err := r.toolsOf(ctx, a, deps)
	if err != nil {
		return exec.Member{}, nil, err
	}
	// The toolsets' guidance, then the deferred tools' once there are any.
	guidance := tools.Instructions(a, deps)
	if deferral != nil {
		guidance = append(guidance, exec.DeferredInstructions)
	}
	extra := append(guidance, teamPrompts(r.cfg, a)...)
	if r.startContext != "" && len(chain) == 1 {
		extra = append(extra, r.startContext)
	}
	system, err := SystemPrompt(a, r.now(), r.opts.WorkingDir, extra)
	if err != nil {
		closeTools()
		return exec.Member{}, nil, err
	}
	var callHooks exec.CallHooks
	if h := r.hookRun(); h != nil {
		callHooks = h.For(a.Name)
	}
	return exec.Member{
		Hooks: callHooks,
		Name:  a.Name, Model: m, Tools: list, System: system, MaxIterations: a.MaxIterations,
		VerdictRequired: tools.VerdictRequired(a), Member: a.Name != r.agent.Name,
		Output: outputFormat(a), Deferral: deferral,
	}, closeTools, nil
}

// outputFormat is a's structured_output for the runner.
func outputFormat(a *config.Agent) *exec.OutputFormat {
	so := a.StructuredOutput
	if so == nil {
		return nil
	}
	return &exec.OutputFormat{Name: so.Name, Description: so.Description, Schema: so.Schema, Strict: so.Strict}
}

// teamPrompts are cagent's system prompt sections naming an agent's
// sub-agents and handoffs.
func teamPrompts(cfg *config.Config, a *config.Agent) []string {
	peers := func(refs []config.AgentRef) []team.Peer {
		out := make([]team.Peer, 0, len(refs))
		for _, ref := range refs {
			if p := cfg.Agent(ref.Name); p != nil {
				out = append(out, team.Peer{Name: p.Name, Description: p.Description})
			}
		}
		return out
	}
	var out []string
	if len(a.SubAgents) > 0 {
		out = append(out, team.SubAgentsPrompt(peers(a.SubAgents)))
	}
	if len(a.Handoffs) > 0 {
		out = append(out, team.HandoffsPrompt(peers(a.Handoffs)))
	}
	return out
}

// handoff is the runner's OnHandoff for the conversation frame: the agent
// handed to goes on with its own instruction, model and tools.
func (r *Run) handoff(frame string, chain []string, setModel func(session.Stateful)) func(context.Context, string) (exec.Member, error) {
	return func(ctx context.Context, name string) (exec.Member, error) {
		a := r.cfg.Agent(name)
		if a == nil {
			return exec.Member{}, fmt.Errorf("no agent %s", name)
		}
		m, stateful, err := r.modelFor(a, frame, r.message)
		if err != nil {
			return exec.Member{}, err
		}
		setModel(stateful)
		next := append(slices.Clone(chain[:len(chain)-1]), a.Name)
		mem, closeTools, err := r.member(ctx, a, m, stateful, next)
		if err != nil {
			return exec.Member{}, err
		}
		r.team.onClose(closeTools) // with the run: the agent may be handed back to
		mem.IDPrefix = idPrefix(frame, a.Name)
		return mem, nil
	}
}

// idPrefix keeps the call ids of an agent handed off to in frame apart
// from the ids its conversation already holds (each agent's model numbers
// its own calls).
func idPrefix(frame, agent string) string {
	p := agent + "-"
	if frame != "" {
		p = frame + "-" + p
	}
	return p
}

// starter runs sub-agents and background agents for the run's tools.
type starter struct{ r *Run }

// Run runs j's agent in its own frame to its final text: a new frame
// starts with the task as its first user turn; a frame the session holds
// (a resumed run) continues where it stopped.
func (s starter) Run(ctx context.Context, j team.Job) (string, error) {
	r := s.r
	a := r.cfg.Agent(j.Agent)
	if a == nil {
		return "", fmt.Errorf("no agent %s", j.Agent)
	}
	chain := append(slices.Clone(j.Chain), a.Name)
	first := team.FirstMessage(j.Task, j.ExpectedOutput)
	st := &exec.State{}
	if r.loaded != nil {
		if saved := r.loaded.Frames[j.Frame]; saved != nil {
			st = saved
		}
	}
	agent := a
	for i := len(st.Messages) - 1; i >= 0; i-- {
		if h := st.Messages[i].Handoff; h != "" {
			if ha := r.cfg.Agent(h); ha != nil {
				agent = ha
				break
			}
		}
	}
	m, stateful, err := r.modelFor(agent, j.Frame, first)
	if err != nil {
		return "", err
	}
	fj := &frameModel{stateful: stateful}
	journal := r.journal.In(j.Frame, fj)
	if len(st.Messages) == 0 {
		st.Messages = []exec.Message{{Role: exec.RoleUser, Text: first}}
		if err := journal.Message(st.Messages[0], st); err != nil {
			return "", err
		}
	}
	mem, closeTools, err := r.member(ctx, agent, m, stateful, chain)
	if err != nil {
		return "", err
	}
	defer closeTools() // the sub-agent's MCP servers end with its task
	mem.IDPrefix = j.Frame + "-"
	if agent != a {
		mem.IDPrefix = idPrefix(j.Frame, agent.Name)
	}
	runner := &exec.Runner{
		Sink: r.opts.Sink, Journal: journal, TaskID: j.TaskID, Nested: true,
		OnHandoff: r.handoff(j.Frame, chain, fj.set),
	}
	runner.Use(mem)
	runner.Member = true
	if runner.MaxIterations <= 0 {
		runner.MaxIterations = exec.DefaultMaxIterations
	}
	out, err := runner.Run(ctx, st)
	var badOutput *exec.OutputError
	if errors.As(err, &badOutput) {
		// The sub-agent's answer, not the run, failed: its parent is told.
		return fmt.Sprintf("the agent %s answered, but %v", runner.Agent, badOutput), nil
	}
	if err != nil {
		return "", err
	}
	if out.Status != exec.StatusSuccess {
		return fmt.Sprintf("the agent %s ended %s: %s", runner.Agent, out.Status, out.Text), nil
	}
	return out.Text, nil
}

// frameModel is a frame's model position for the journal; a handoff inside
// the frame switches it.
type frameModel struct {
	mu       sync.Mutex
	stateful session.Stateful
}

func (f *frameModel) set(s session.Stateful) {
	f.mu.Lock()
	f.stateful = s
	f.mu.Unlock()
}

func (f *frameModel) State() json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stateful == nil {
		return nil
	}
	return f.stateful.State()
}

func (f *frameModel) Restore(json.RawMessage) error { return nil }

// tasks are the background tasks a resumed run knew, given once.
func (r *Run) tasks() []team.Task {
	r.team.mu.Lock()
	taken := r.team.tasksTaken
	r.team.tasksTaken = true
	r.team.mu.Unlock()
	if r.loaded == nil || taken {
		return nil
	}
	var out []team.Task
	for _, raw := range r.loaded.Tasks {
		var t team.Task
		if json.Unmarshal(raw, &t) == nil && t.ID != "" {
			out = append(out, t)
		}
	}
	return out
}

// recordTask journals a background task's start or end.
func (r *Run) recordTask(t team.Task) {
	if b, err := json.Marshal(t); err == nil {
		r.journal.Task(b)
	}
}

// otherModels are the models some of a's turns may go to besides its own:
// its toolsets' model: and its model_picker's models, by reference.
func otherModels(a *config.Agent) (map[string]*config.Model, []string) {
	models := map[string]*config.Model{}
	var order []string
	add := func(ref string, m *config.Model) {
		if m == nil {
			return
		}
		if _, ok := models[ref]; !ok {
			models[ref] = m
			order = append(order, ref)
		}
	}
	for _, ts := range a.Toolsets {
		add(ts.ModelRef, ts.Model)
		for i, m := range ts.Models {
			if i < len(ts.PickRefs) {
				add(ts.PickRefs[i], m)
			}
		}
	}
	return models, order
}
