package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/hitl-dev/hitl/internal/termtext"
)

// The tools an agent with deferred tools gets (cagent's toolset defer:).
const (
	SearchToolName = "search_tool"
	AddToolName    = "add_tool"
)

// DeferredInstructions is the system prompt's section for an agent with
// deferred tools (cagent's words).
const DeferredInstructions = `## Deferred Tools

Use search_tool to discover additional tools by keyword (e.g., "remote", "read", "write"). Use add_tool to activate a discovered tool.`

// Deferral holds an agent's deferred tools (cagent's toolset defer:): the
// model is not offered them at first. search_tool finds them, add_tool
// activates one; from the next model turn on, an activated tool is offered
// and called like any other (a call in the turn of its add_tool is a call
// of an unknown tool).
//
// Which tools are active is read from the conversation: the successful
// add_tool results of the agent's own calls. A resumed run keeps them with
// nothing stored besides the messages.
type Deferral struct {
	tools  []Tool
	byName map[string]Tool

	mu     sync.Mutex
	active map[string]bool // for the call being run: set by the Runner
}

// NewDeferral holds tools as deferred; nil when there are none.
func NewDeferral(tools []Tool) *Deferral {
	if len(tools) == 0 {
		return nil
	}
	d := &Deferral{tools: tools, byName: map[string]Tool{}}
	for _, t := range tools {
		d.byName[t.Spec().Name] = t
	}
	return d
}

// Deferred returns the deferred tools, in toolset order.
func (d *Deferral) Deferred() []Tool {
	if d == nil {
		return nil
	}
	return d.tools
}

// Tools returns search_tool and add_tool, to put among the agent's tools.
// Both only read: they need no approval (permission rules may name them).
func (d *Deferral) Tools() []Tool {
	if d == nil {
		return nil
	}
	return []Tool{&searchTool{d}, &addTool{d}}
}

func (d *Deferral) has(name string) bool {
	_, ok := d.byName[name]
	return ok
}

// setActive is the active set as of the call about to run.
func (d *Deferral) setActive(active map[string]bool) {
	d.mu.Lock()
	d.active = active
	d.mu.Unlock()
}

func (d *Deferral) isActive(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.active[name]
}

// Activated returns the deferred tools agent activated in msgs: each
// successful add_tool call of agent's whose result says the tool is active.
func (d *Deferral) Activated(msgs []Message, agent string) map[string]bool {
	active := map[string]bool{}
	if d == nil {
		return active
	}
	calls := map[string]string{} // add_tool call id -> the name it asked for
	for _, m := range msgs {
		switch m.Role {
		case RoleAssistant:
			if m.Agent != agent {
				continue
			}
			for _, c := range m.ToolCalls {
				if c.Name == AddToolName {
					calls[c.ID] = addToolArg(c.Arguments)
				}
			}
		case RoleTool:
			name, ok := calls[m.ToolCallID]
			if !ok || m.IsError || m.ToolName != AddToolName || !d.has(name) {
				continue
			}
			// The description may have changed since (an MCP server's):
			// the words before it say the tool was activated.
			if strings.HasPrefix(m.Text, activatedPrefix(name)) || m.Text == alreadyActiveText(name) {
				active[name] = true
			}
		}
	}
	return active
}

func addToolArg(args json.RawMessage) string {
	var a struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	return a.Name
}

func activatedPrefix(name string) string {
	return fmt.Sprintf("Tool '%s' has been activated and is now available for use.\n\nDescription: ", name)
}

func alreadyActiveText(name string) string { return fmt.Sprintf("Tool '%s' is already active", name) }

// echoed shortens what the model wrote to what a result repeats of it.
func echoed(s string) string {
	short, _ := termtext.Shorten(s, 200)
	return short
}

type searchTool struct{ d *Deferral }

func (t *searchTool) Spec() ToolSpec {
	return ToolSpec{
		Name:        SearchToolName,
		Description: "Search for available deferred tools by name or description. Use this to discover tools that can be activated.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Search query to find tools by name or description (case-insensitive)"}},"required":["query"],"additionalProperties":false}`),
	}
}

// Call lists the deferred tools not yet active whose name or description
// holds the query (any case), sorted by name.
func (t *searchTool) Call(_ context.Context, call ToolCall) (Result, error) {
	var args struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return Result{IsError: true, Text: fmt.Sprintf("invalid arguments for %s: %v", SearchToolName, err)}, nil
	}
	query := strings.ToLower(args.Query)
	type found struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	var results []found
	for _, tool := range t.d.tools {
		spec := tool.Spec()
		if t.d.isActive(spec.Name) {
			continue
		}
		if strings.Contains(strings.ToLower(spec.Name), query) || strings.Contains(strings.ToLower(spec.Description), query) {
			results = append(results, found{spec.Name, spec.Description})
		}
	}
	if len(results) == 0 {
		return Result{IsError: true, Text: fmt.Sprintf("No deferred tools found matching '%s'", echoed(args.Query))}, nil
	}
	sort.Slice(results, func(i, j int) bool { return results[i].Name < results[j].Name })
	out, err := json.Marshal(results)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: fmt.Sprintf("Found %d deferred tool(s):\n%s", len(results), out)}, nil
}

type addTool struct{ d *Deferral }

func (t *addTool) Spec() ToolSpec {
	return ToolSpec{
		Name:        AddToolName,
		Description: "Activate a deferred tool by name, making it available for use. Use search_tool first to find available tools.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The name of the tool to activate"}},"required":["name"],"additionalProperties":false}`),
	}
}

// Call activates a deferred tool: its success result is what the runner
// reads the activation from.
func (t *addTool) Call(_ context.Context, call ToolCall) (Result, error) {
	name := addToolArg(call.Arguments)
	if t.d.isActive(name) {
		return Result{Text: alreadyActiveText(name)}, nil
	}
	tool, ok := t.d.byName[name]
	if !ok {
		return Result{IsError: true, Text: fmt.Sprintf("Tool '%s' not found.", echoed(name))}, nil
	}
	return Result{Text: activatedPrefix(name) + tool.Spec().Description}, nil
}
