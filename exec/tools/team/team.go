// Package team gives an agent the tools of cagent's multi-agent forms
// (DESIGN §13): transfer_task to its sub_agents, handoff to its handoffs,
// and the background_agents toolset. The agents themselves are run by the
// run (a Starter): with their own instruction, model and tools, and the
// run's one question path, permissions and journal.
package team

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hitl-dev/hitl/exec"
)

// MaxDepth bounds how deeply transfer_task nests: the root's sub-agent is
// at depth 1.
const MaxDepth = 10

// Job is an agent to run to its final text.
type Job struct {
	Agent          string
	Task           string
	ExpectedOutput string
	// Frame names the conversation: the id of the call that started it,
	// unique in the run. A resumed run continues the frame's conversation
	// where it stopped.
	Frame string
	// TaskID is a background agent's task ("" for transfer_task).
	TaskID string
	// Chain is the agents the task passed through, the run's first agent
	// first, ending with the one that transfers.
	Chain []string
}

// Starter runs agents of the agent file for the run.
type Starter interface {
	// Run runs j to the agent's final text. An error is not the model's:
	// it stops the run (a question nobody answered, an interrupt).
	Run(ctx context.Context, j Job) (string, error)
}

// FirstMessage is a sub-agent's first user turn: cagent's words for a
// task given to a member of a team.
func FirstMessage(task, expectedOutput string) string {
	msg := "You are a member of a team of agents. Your goal is to complete the following task:"
	msg += fmt.Sprintf("\n\n<task>\n%s\n</task>", task)
	if expectedOutput != "" {
		msg += fmt.Sprintf("\n\n<expected_output>\n%s\n</expected_output>", expectedOutput)
	}
	return msg
}

// Transfer is transfer_task.
type Transfer struct {
	From      string   // the agent whose tool it is
	SubAgents []string // whom it may transfer to
	Chain     []string // the agents above From, ending with From
	Starter   Starter
}

const transferProperties = `{"type":"object","properties":{` +
	`"agent":{"type":"string","description":"The name of the agent to transfer the task to."},` +
	`"task":{"type":"string","description":"A clear and concise description of the task the member should achieve."},` +
	`"expected_output":{"type":"string","description":"The expected output from the member (optional)."}},`

// transferSchema is cagent's, as the model sees it: expected_output is
// listed as required though described as optional.
const transferSchema = transferProperties + `"required":["agent","task","expected_output"],"additionalProperties":false}`

// transferAccepted is what a call may leave out: cagent's runtime runs a
// transfer without expected_output, and so does hitl.
const transferAccepted = transferProperties + `"required":["agent","task"],"additionalProperties":false}`

// AcceptedParameters lets a call leave expected_output out.
func (t *Transfer) AcceptedParameters() json.RawMessage { return json.RawMessage(transferAccepted) }

func (t *Transfer) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name: "transfer_task",
		Description: "Use this function to transfer a task to the selected team member.\n" +
			"            You must provide a clear and concise description of the task the member should achieve AND the expected output.",
		Parameters: json.RawMessage(transferSchema),
	}
}

type transferArgs struct {
	Agent          string `json:"agent"`
	Task           string `json:"task"`
	ExpectedOutput string `json:"expected_output"`
}

func (t *Transfer) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var a transferArgs
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return errorf("invalid arguments for transfer_task: %v", err), nil
	}
	if strings.TrimSpace(a.Task) == "" {
		return errorf("transfer_task needs a task: say what %s should achieve", orAgent(a.Agent)), nil
	}
	if !slices.Contains(t.SubAgents, a.Agent) {
		return errorf("Agent %s cannot transfer task to %s: target agent not in sub-agents list. Available agent IDs are: %s", t.From, a.Agent, strings.Join(t.SubAgents, ", ")), nil
	}
	if slices.Contains(t.Chain, a.Agent) {
		path := append(slices.Clone(t.Chain), a.Agent)
		return errorf("Agent %s cannot transfer task to %s: %s is already working on the task this one is part of (%s); do the task yourself or give it to another sub-agent", t.From, a.Agent, a.Agent, strings.Join(path, " → ")), nil
	}
	if len(t.Chain) > MaxDepth {
		return errorf("Agent %s cannot transfer task to %s: transfers nest at most %d deep (%s); do the task yourself", t.From, a.Agent, MaxDepth, strings.Join(t.Chain, " → ")), nil
	}
	text, err := t.Starter.Run(ctx, Job{Agent: a.Agent, Task: a.Task, ExpectedOutput: a.ExpectedOutput, Frame: call.ID, Chain: slices.Clone(t.Chain)})
	if err != nil {
		return exec.Result{}, err
	}
	return exec.Result{Text: text}, nil
}

func orAgent(name string) string {
	if name == "" {
		return "the agent"
	}
	return name
}

func errorf(format string, args ...any) exec.Result {
	return exec.Result{IsError: true, Text: fmt.Sprintf(format, args...)}
}

// Handoff is handoff.
type Handoff struct {
	From     string
	Handoffs []string
}

const handoffSchema = `{"type":"object","properties":{` +
	`"agent":{"type":"string","description":"The name of the agent to hand off the conversation to."}},` +
	`"required":["agent"],"additionalProperties":false}`

func (h *Handoff) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name:        "handoff",
		Description: "Use this function to hand off the conversation to the selected agent.",
		Parameters:  json.RawMessage(handoffSchema),
	}
}

func (h *Handoff) Call(_ context.Context, call exec.ToolCall) (exec.Result, error) {
	var a struct {
		Agent string `json:"agent"`
	}
	if err := json.Unmarshal(call.Arguments, &a); err != nil {
		return errorf("invalid arguments for handoff: %v", err), nil
	}
	if !slices.Contains(h.Handoffs, a.Agent) {
		return errorf("Agent %s cannot hand off to %s: target agent not in handoffs list. Available agent IDs are: %s", h.From, a.Agent, strings.Join(h.Handoffs, ", ")), nil
	}
	return exec.Result{Handoff: a.Agent, Text: "The agent " + h.From + " handed off the conversation to you. " +
		"Your available handoff agents and tools are specified in the system messages that follow. " +
		"Only use those capabilities - do not attempt to use tools or hand off to agents that you see " +
		"in the conversation history from previous agents, as those were available to different agents " +
		"with different capabilities. Look at the conversation history for context, but only use the " +
		"handoff agents and tools that are listed in your system messages below. " +
		"Complete your part of the task and hand off to the next appropriate agent in your workflow " +
		"(if any are available to you), or respond directly to the user if you are the final agent."}, nil
}

// Peer is an agent another may give work to, as its system prompt names
// it.
type Peer struct{ Name, Description string }

// SubAgentsPrompt is cagent's system prompt section of an agent with
// sub_agents.
func SubAgentsPrompt(peers []Peer) string {
	list, names := listPeers(peers)
	return "You are a multi-agent system, make sure to answer the user query in the most helpful way possible. You have access to these sub-agents:\n" + list +
		"\nIMPORTANT: You can ONLY transfer tasks to the agents listed above using their ID. The valid agent names are: " + strings.Join(names, ", ") +
		". You MUST NOT attempt to transfer to any other agent IDs - doing so will cause system errors.\n\n" +
		"If you are the best to answer the question according to your description, you can answer it.\n\n" +
		"If another agent is better for answering the question according to its description, call `transfer_task` function to transfer the question to that agent using the agent's ID. When transferring, do not generate any text other than the function call."
}

// HandoffsPrompt is cagent's system prompt section of an agent with
// handoffs.
func HandoffsPrompt(peers []Peer) string {
	list, names := listPeers(peers)
	return "You are part of a multi-agent team. Your goal is to answer the user query in the most helpful way possible.\n\n" +
		"Available agents in your team:\n" + list + "\n" +
		"You can hand off the conversation to any of these agents at any time by using the `handoff` function with their ID. " +
		"The valid agent IDs are: " + strings.Join(names, ", ") + ".\n\n" +
		"When to hand off:\n" +
		"- If another agent's description indicates they are better suited for the current task or question\n" +
		"- If the user explicitly asks for a specific agent\n" +
		"- If you need specialized capabilities that another agent provides\n\n" +
		"If you are the best agent to handle the current request based on your capabilities, respond directly. " +
		"When handing off to another agent, only handoff without talking about the handoff."
}

// listPeers is cagent's list of agents ("Name: x | Description: y" lines)
// and their names.
func listPeers(peers []Peer) (string, []string) {
	var list strings.Builder
	names := make([]string, len(peers))
	for i, p := range peers {
		fmt.Fprintf(&list, "Name: %s | Description: %s\n", p.Name, p.Description)
		names[i] = p.Name
	}
	return list.String(), names
}
