package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hitl-dev/hitl/internal/termtext"
	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/schema"
)

// DefaultMaxIterations bounds the model turns of a run when neither the agent
// file nor a flag says otherwise.
const DefaultMaxIterations = 50

// DefaultMessage is the first user turn when none is given.
const DefaultMessage = "Begin the task described in your instructions."

// State is what a run has done so far: enough to continue it.
type State struct {
	Messages   []Message `json:"messages"`
	Iterations int       `json:"iterations"`
	Usage      Usage     `json:"usage"`
}

// Journal is told of every step of a run so the run can be resumed; see the
// session package.
type Journal interface {
	// Message records a message appended to the conversation, and the
	// state after it.
	Message(m Message, st *State) error
}

// MaxIterationsError is a run that reached its limit of model turns.
type MaxIterationsError struct{ Limit int }

func (e *MaxIterationsError) Error() string {
	return fmt.Sprintf("reached max_iterations (%d model turns) before the agent finished; raise max_iterations in the agent file or pass --max-iterations", e.Limit)
}

// Runner runs the agent loop.
type Runner struct {
	Model         Model
	Tools         []Tool
	System        string
	MaxIterations int
	// VerdictRequired makes a run that ends without a tool's End outcome
	// rejected (verdict's required: true).
	VerdictRequired bool
	Sink            Sink
	Journal         Journal
	// Before, when set, runs once before the loop goes on (a resumed run
	// asks again for the secrets it lost); its error ends the run.
	Before func(ctx context.Context) error

	// Agent names the agent on every event and question (DESIGN §13);
	// TaskID is its background task, Member says it is not the agent the
	// run started with.
	Agent  string
	TaskID string
	Member bool
	// Nested: the runner runs inside another agent's tool call (a
	// sub-agent, a background agent): its last text is that call's
	// result, not the run's.
	Nested bool
	// IDPrefix is put before the ids of the model's tool calls, so a
	// sub-agent's calls never share an id with another agent's (answers
	// and questions are kept by call id).
	IDPrefix string
	// Output, when set, is the shape of the final answer: asked of the
	// model and checked before the run succeeds.
	Output *OutputFormat
	// OnHandoff gives the agent a handoff goes on with; nil: no handoffs.
	OnHandoff func(ctx context.Context, agent string) (Member, error)
	// Hooks, when set, run around each tool call.
	Hooks CallHooks
	// Deferral holds the agent's deferred tools (cagent's defer:): each
	// is offered, right after add_tool, from the turn after the one that
	// activated it. Tools holds its search_tool and add_tool.
	Deferral *Deferral

	byName   map[string]Tool
	schemas  map[string]*schema.Schema
	deferred map[string]bool // the names of Deferral's tools
}

// Run continues st until the agent finishes, a tool ends the run, or an error
// stops it. The first user turn must already be in st.
func (r *Runner) Run(ctx context.Context, st *State) (Outcome, error) {
	if err := r.prepare(); err != nil {
		return Outcome{}, err
	}
	if r.Before != nil {
		if err := r.Before(ctx); err != nil {
			return Outcome{}, err
		}
	}
	max := r.MaxIterations
	if max <= 0 {
		max = DefaultMaxIterations
	}
	for {
		if pending := PendingCalls(st.Messages); len(pending) > 0 {
			if out, done, err := r.runCalls(ctx, st, pending); done || err != nil {
				return out, err
			}
			continue
		}
		if last := st.lastAssistant(); last != nil && len(last.ToolCalls) == 0 && st.Messages[len(st.Messages)-1].Role == RoleAssistant {
			return r.finish(last.Text)
		}
		if st.Iterations >= max {
			return Outcome{}, &MaxIterationsError{Limit: max}
		}
		if err := ctx.Err(); err != nil {
			return Outcome{}, err
		}
		turn, err := r.Model.Turn(ctx, Request{System: r.System, Messages: st.Messages, Tools: r.specs(r.activated(st.Messages)), Output: r.Output})
		if err != nil {
			return Outcome{}, fmt.Errorf("model turn %d: %w", st.Iterations+1, err)
		}
		st.Iterations++
		st.Usage = st.Usage.Add(turn.Usage)
		msg := turn.Message
		msg.Role = RoleAssistant
		msg.Agent = r.Agent
		for i := range msg.ToolCalls {
			msg.ToolCalls[i].ID = r.IDPrefix + msg.ToolCalls[i].ID
		}
		if err := r.append(st, msg); err != nil {
			return Outcome{}, err
		}
		if msg.Text != "" {
			r.emit(&MessageEvent{Role: string(RoleAssistant), Text: msg.Text, Final: len(msg.ToolCalls) == 0 && !r.Nested, Agent: r.Agent, TaskID: r.TaskID}, "message")
		}
	}
}

func (r *Runner) finish(text string) (Outcome, error) {
	if r.VerdictRequired {
		return Outcome{Status: StatusRejected, Text: "the agent ended without a verdict, and its verdict toolset is required"}, nil
	}
	out := Outcome{Status: StatusSuccess, Text: text}
	if r.Output != nil {
		v, err := r.Output.Check(text)
		if err != nil {
			return Outcome{}, err
		}
		out.Output = v
	}
	return out, nil
}

// OutputError is a final answer that does not have the agent's
// structured_output shape: the run fails (exit 1), saying why.
type OutputError struct {
	Name   string
	Reason string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("the final answer does not fit structured_output %s: %s", e.Name, e.Reason)
}

// Check reads text as the structured answer: one JSON value (a fenced
// ```json block is read as its content) that fits the schema.
func (f *OutputFormat) Check(text string) (json.RawMessage, error) {
	t := strings.TrimSpace(text)
	if body, ok := strings.CutPrefix(t, "```"); ok {
		body = strings.TrimPrefix(body, "json")
		if inner, ok := strings.CutSuffix(strings.TrimSpace(body), "```"); ok {
			t = strings.TrimSpace(inner)
		}
	}
	if !json.Valid([]byte(t)) {
		shown, _ := termtext.Shorten(t, 80)
		return nil, &OutputError{Name: f.Name, Reason: "it is not JSON: " + shown}
	}
	s, err := schema.Compile(f.Schema)
	if err != nil {
		return nil, &OutputError{Name: f.Name, Reason: err.Error()}
	}
	if err := s.Validate([]byte(t)); err != nil {
		return nil, &OutputError{Name: f.Name, Reason: err.Error()}
	}
	return json.RawMessage(t), nil
}

func (st *State) lastAssistant() *Message {
	for i := len(st.Messages) - 1; i >= 0; i-- {
		if st.Messages[i].Role == RoleAssistant {
			return &st.Messages[i]
		}
	}
	return nil
}

// PendingCalls returns the calls of the last assistant message that have no
// result yet (all of them right after a model turn; the rest of them when a
// stopped run is resumed).
func PendingCalls(msgs []Message) []ToolCall {
	i := len(msgs) - 1
	for i >= 0 && msgs[i].Role == RoleTool {
		i--
	}
	if i < 0 || msgs[i].Role != RoleAssistant {
		return nil
	}
	done := map[string]bool{}
	for _, m := range msgs[i+1:] {
		done[m.ToolCallID] = true
	}
	var pending []ToolCall
	for _, c := range msgs[i].ToolCalls {
		if !done[c.ID] {
			pending = append(pending, c)
		}
	}
	return pending
}

// Invoke runs call as one of the agent's own (a command's tool call):
// hooked, checked, approved and shown like the model's calls, but not
// added to the conversation. A tool the agent lacks is an error.
func (r *Runner) Invoke(ctx context.Context, call ToolCall) (Result, error) {
	if err := r.prepare(); err != nil {
		return Result{}, err
	}
	call.ID = r.IDPrefix + call.ID
	offered := map[string]bool{} // before the first turn, no deferred tool is active
	if _, ok := r.byName[call.Name]; !ok || r.deferred[call.Name] {
		return Result{}, fmt.Errorf("the command calls %s, a tool agent %s does not have; its tools: %s", call.Name, r.Agent, strings.Join(r.names(offered), ", "))
	}
	var blocked *Result
	if r.Hooks != nil {
		call, blocked = r.Hooks.Before(r.withAgent(ctx), call)
	}
	r.emit(&ToolCallEvent{CallID: call.ID, Name: call.Name, Arguments: call.Arguments, Server: r.server(call.Name, offered), Agent: r.Agent, TaskID: r.TaskID, Asks: r.asks(call.Name, offered)}, "tool.call")
	var res Result
	if blocked != nil {
		res = *blocked
	} else {
		var err error
		if res, err = r.call(ctx, call, offered); err != nil {
			return Result{}, err
		}
		if r.Hooks != nil {
			r.Hooks.After(r.withAgent(ctx), call, res)
		}
	}
	r.emit(&ToolResultEvent{CallID: call.ID, Name: call.Name, Result: res.Text, IsError: res.IsError, Agent: r.Agent, TaskID: r.TaskID}, "tool.result")
	return res, nil
}

// CallHooks are an agent's hooks around its tool calls (cagent's
// pre_tool_use and post_tool_use; package hooks).
type CallHooks interface {
	// Before runs before the call is checked, approved and run: it may
	// rewrite the call's arguments (what is then checked, shown and run),
	// or block it with a result for the model.
	Before(ctx context.Context, call ToolCall) (ToolCall, *Result)
	// After runs once the call has its result.
	After(ctx context.Context, call ToolCall, res Result)
}

// runCalls runs calls in order; done is true when a tool ended the run.
func (r *Runner) runCalls(ctx context.Context, st *State, calls []ToolCall) (Outcome, bool, error) {
	if err := r.prepare(); err != nil {
		return Outcome{}, false, err
	}
	// The calls are the last assistant turn's: the deferred tools it was
	// offered are those activated before it.
	var offered map[string]bool
	if r.Deferral != nil {
		turn := len(st.Messages)
		for turn > 0 && st.Messages[turn-1].Role != RoleAssistant {
			turn--
		}
		if turn > 0 {
			turn--
		}
		offered = r.activated(st.Messages[:turn])
	}
	for i, call := range calls {
		if err := ctx.Err(); err != nil {
			return Outcome{}, false, err
		}
		// Hooks run for a call of a tool the turn was offered (a
		// deferred tool not yet activated is not one).
		_, known := r.byName[call.Name]
		known = known && r.Hooks != nil && !(r.deferred[call.Name] && !offered[call.Name])
		// A call that acted before the run was stopped is not run again:
		// its recorded result (or that it was interrupted) is its result.
		recorded, replayed := r.recorded(call)
		known = known && !replayed
		var blocked *Result
		if known && json.Valid(call.Arguments) {
			call, blocked = r.Hooks.Before(r.withAgent(ctx), call)
		}
		args := call.Arguments
		if len(args) == 0 || !json.Valid(args) {
			args = json.RawMessage("{}") // the event's arguments field is always an object
		}
		r.emit(&ToolCallEvent{CallID: call.ID, Name: call.Name, Arguments: args, Server: r.server(call.Name, offered), Agent: r.Agent, TaskID: r.TaskID, Asks: r.asks(call.Name, offered)}, "tool.call")
		if r.Deferral != nil && (call.Name == SearchToolName || call.Name == AddToolName) {
			// What is active now, this turn's add_tool calls included.
			r.Deferral.setActive(r.activated(st.Messages))
		}
		var res Result
		switch {
		case replayed:
			res = recorded
		case blocked != nil:
			res = *blocked
		default:
			var err error
			if res, err = r.act(ctx, call, offered); err != nil {
				return Outcome{}, false, err
			}
			if known {
				r.Hooks.After(r.withAgent(ctx), call, res)
			}
		}
		msg := Message{Role: RoleTool, ToolCallID: call.ID, ToolName: call.Name, Text: res.Text, IsError: res.IsError, Handoff: res.Handoff}
		if err := r.append(st, msg); err != nil {
			return Outcome{}, false, err
		}
		r.emit(&ToolResultEvent{CallID: call.ID, Name: call.Name, Result: res.Text, IsError: res.IsError, Agent: r.Agent, TaskID: r.TaskID}, "tool.result")
		if res.End != nil {
			return *res.End, true, nil
		}
		if res.Handoff != "" {
			return Outcome{}, false, r.handOff(ctx, st, res.Handoff, calls[i+1:])
		}
	}
	return Outcome{}, false, nil
}

// handOff goes on with agent: the calls of the turn after the handoff
// are not run (each gets a result saying so), and the next turn is the
// other agent's.
func (r *Runner) handOff(ctx context.Context, st *State, agent string, skipped []ToolCall) error {
	for _, c := range skipped {
		text := fmt.Sprintf("not run: the conversation was handed off to %s before this call", agent)
		if err := r.append(st, Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name, Text: text, IsError: true}); err != nil {
			return err
		}
		r.emit(&ToolResultEvent{CallID: c.ID, Name: c.Name, Result: text, IsError: true, Agent: r.Agent, TaskID: r.TaskID}, "tool.result")
	}
	if r.OnHandoff == nil {
		return fmt.Errorf("handoff to %s: this run cannot hand off", agent)
	}
	m, err := r.OnHandoff(ctx, agent)
	if err != nil {
		return fmt.Errorf("handoff to %s: %w", agent, err)
	}
	r.Use(m)
	return nil
}

// Member is one agent's part of a run (DESIGN §13): what a runner works
// with, and what a handoff switches it to.
type Member struct {
	Name            string
	Model           Model
	Tools           []Tool
	System          string
	MaxIterations   int
	VerdictRequired bool
	// Member: not the agent the run started with.
	Member bool
	// IDPrefix is put before its tool calls' ids (Runner.IDPrefix).
	IDPrefix string
	// Output is its structured_output (Runner.Output).
	Output *OutputFormat
	// Hooks run around its tool calls (Runner.Hooks).
	Hooks CallHooks
	// Deferral holds its deferred tools (Runner.Deferral).
	Deferral *Deferral
}

// Use makes the runner work as m from the next model turn on.
func (r *Runner) Use(m Member) {
	r.Agent, r.Model, r.Tools, r.System, r.Member, r.IDPrefix = m.Name, m.Model, m.Tools, m.System, m.Member, m.IDPrefix
	if m.MaxIterations > 0 {
		r.MaxIterations = m.MaxIterations
	}
	r.VerdictRequired, r.Output, r.Hooks, r.Deferral = m.VerdictRequired, m.Output, m.Hooks, m.Deferral
	r.byName, r.schemas = nil, nil
}

// withAgent says in ctx which agent asks (for the questions of a call).
func (r *Runner) withAgent(ctx context.Context) context.Context {
	if r.Agent == "" {
		return ctx
	}
	return prompt.WithAgent(ctx, prompt.From{Agent: r.Agent, TaskID: r.TaskID, Member: r.Member})
}

// Prepare checks the runner's tools (their names, their parameter
// schemas) before any call; after it, Call is safe for concurrent use.
func (r *Runner) Prepare() error { return r.prepare() }

// Call runs one call of the runner's tools outside any turn, checked as a
// model's call is (an unknown tool, arguments that are not JSON, that name
// a key twice or break the tool's schema are error results naming what is
// wrong): hitl mcp serving its tools to another agent.
func (r *Runner) Call(ctx context.Context, call ToolCall) (Result, error) {
	return r.call(ctx, call, nil)
}

// call runs one tool call; mistakes of the model become error results.
// offered are the deferred tools the call's turn was offered.
func (r *Runner) call(ctx context.Context, call ToolCall, offered map[string]bool) (Result, error) {
	if err := r.prepare(); err != nil {
		return Result{}, err
	}
	ctx = r.withAgent(ctx)
	tool, ok := r.byName[call.Name]
	if !ok || (r.deferred[call.Name] && !offered[call.Name]) {
		return Result{IsError: true, Text: fmt.Sprintf("unknown tool %q; the tools available are: %s", call.Name, strings.Join(r.names(offered), ", "))}, nil
	}
	args := call.Arguments
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
		call.Arguments = args
	}
	if !json.Valid(args) {
		shown, _ := termtext.Shorten(string(args), 200)
		return Result{IsError: true, Text: fmt.Sprintf("the arguments of %s are not valid JSON: %s", call.Name, shown)}, nil
	}
	if err := checkArgumentKeys(args, tool.Spec().Parameters); err != nil {
		return Result{IsError: true, Text: fmt.Sprintf("invalid arguments for %s: %v", call.Name, err)}, nil
	}
	if s := r.schemas[call.Name]; s != nil {
		if err := s.Validate(args); err != nil {
			return Result{IsError: true, Text: fmt.Sprintf("invalid arguments for %s: %v", call.Name, err)}, nil
		}
	}
	return tool.Call(ctx, call)
}

// act runs call as call does; with a CallJournal, a tool that acts
// (exec.StartActing) has its start recorded before it acts and its result
// right after.
func (r *Runner) act(ctx context.Context, call ToolCall, offered map[string]bool) (Result, error) {
	cj, ok := r.Journal.(CallJournal)
	if !ok {
		return r.call(ctx, call, offered)
	}
	var started atomic.Bool
	ctx = withActing(ctx, func() error {
		if err := cj.Started(call.ID); err != nil {
			return err
		}
		started.Store(true)
		return nil
	})
	res, err := r.call(ctx, call, offered)
	switch {
	case !started.Load():
	case err != nil:
		// Stopped by the run (a signal): not a completed step.
		_ = cj.Stopped(call.ID)
	default:
		if err := cj.Ended(call.ID, res); err != nil {
			return Result{}, fmt.Errorf("session journal: %w", err)
		}
	}
	return res, err
}

// recorded is what the journal kept of call from before the run stopped
// (CallJournal.Recorded).
func (r *Runner) recorded(call ToolCall) (Result, bool) {
	if cj, ok := r.Journal.(CallJournal); ok {
		return cj.Recorded(call.ID)
	}
	return Result{}, false
}

// server is the MCP server of the tool name ("" for other tools, and for
// a deferred tool not offered): a tool that has one says so with a Server
// method.
func (r *Runner) server(name string, offered map[string]bool) string {
	if r.deferred[name] && !offered[name] {
		return ""
	}
	if s, ok := r.byName[name].(interface{ Server() string }); ok {
		return s.Server()
	}
	return ""
}

// asks reports whether name is a tool that asks a person (Asking) and
// that the turn was offered.
func (r *Runner) asks(name string, offered map[string]bool) bool {
	if r.deferred[name] && !offered[name] {
		return false
	}
	a, ok := r.byName[name].(Asking)
	return ok && a.AsksPerson()
}

func (r *Runner) append(st *State, m Message) error {
	st.Messages = append(st.Messages, m)
	if r.Journal != nil {
		if err := r.Journal.Message(m, st); err != nil {
			return fmt.Errorf("session journal: %w", err)
		}
	}
	return nil
}

// lenientArguments is a tool that accepts more than the schema it shows
// the model: what another runtime's schema requires but its runtime does
// without (cagent's transfer_task and expected_output).
type lenientArguments interface {
	AcceptedParameters() json.RawMessage
}

func (r *Runner) prepare() error {
	if r.byName != nil {
		return nil
	}
	r.byName = map[string]Tool{}
	r.schemas = map[string]*schema.Schema{}
	r.deferred = map[string]bool{}
	for _, t := range r.Deferral.Deferred() {
		r.deferred[t.Spec().Name] = true
	}
	for _, t := range append(slices.Clone(r.Tools), r.Deferral.Deferred()...) {
		spec := t.Spec()
		if _, twice := r.byName[spec.Name]; twice && r.deferred[spec.Name] {
			r.byName = nil
			return fmt.Errorf("tool %s is both deferred and not", spec.Name)
		}
		r.byName[spec.Name] = t
		params := spec.Parameters
		if l, ok := t.(lenientArguments); ok {
			params = l.AcceptedParameters()
		}
		if len(params) == 0 {
			continue
		}
		s, err := schema.Compile(params)
		if err != nil {
			return fmt.Errorf("tool %s: parameters: %w", spec.Name, err)
		}
		r.schemas[spec.Name] = s
	}
	return nil
}

// specs are the tools the model is offered: the agent's, and after
// add_tool the deferred ones it activated, in toolset order.
func (r *Runner) specs(activated map[string]bool) []ToolSpec {
	specs := make([]ToolSpec, 0, len(r.Tools))
	for _, t := range r.Tools {
		spec := t.Spec()
		specs = append(specs, spec)
		if spec.Name == AddToolName {
			for _, d := range r.Deferral.Deferred() {
				if activated[d.Spec().Name] {
					specs = append(specs, d.Spec())
				}
			}
		}
	}
	return specs
}

// activated are the deferred tools the agent activated in msgs.
func (r *Runner) activated(msgs []Message) map[string]bool {
	if r.Deferral == nil {
		return nil
	}
	return r.Deferral.Activated(msgs, r.Agent)
}

// names are the tools a turn offered with the deferred tools offered.
func (r *Runner) names(offered map[string]bool) []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		if r.deferred[n] && !offered[n] {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return []string{"(none)"}
	}
	return names
}

func (r *Runner) emit(e Event, typ string) {
	if r.Sink == nil {
		return
	}
	r.Sink.Emit(Stamp(e, typ, time.Now()))
}
