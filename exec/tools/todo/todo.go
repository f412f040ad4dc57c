// Package todo is cagent's todo toolset: create_todo, create_todos,
// update_todos and list_todos over one list kept for the run. The tools act
// on nothing outside the run and never ask.
//
// The list lives in the session through the conversation: every successful
// result carries the whole list (all_todos, or todos for list_todos), so
// Resume rebuilds it from a resumed run's messages and no journal record of
// its own is needed.
package todo

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hitl-dev/hitl/exec"
)

// Tool names.
const (
	CreateTodo  = "create_todo"
	CreateTodos = "create_todos"
	UpdateTodos = "update_todos"
	ListTodos   = "list_todos"
)

// Statuses a todo can have.
const (
	Pending    = "pending"
	InProgress = "in-progress"
	Completed  = "completed"
)

// Bounds on what the model can store.
const (
	// MaxTodos is the most todos the list holds.
	MaxTodos = 1000
	// MaxDescription is the most characters of a description.
	MaxDescription = 10000
)

// Instructions is the toolset's guidance for the system prompt (cagent's).
const Instructions = `## Todo Tools

Track task progress with todos:
- Create todos for each major step before starting complex work (prefer batch create_todos)
- Update status to "in-progress" before starting, "completed" immediately after finishing
- Every todo MUST be marked "completed" before your final response
- Batch multiple updates in a single update_todos call
- Never leave todos pending or in-progress when done`

// Todo is one item of the list, as the model sees it.
type Todo struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Status      string `json:"status"`
}

// Update is one status change of update_todos.
type Update struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// The results, in cagent's shapes.
type (
	createOutput struct {
		Created  Todo   `json:"created"`
		AllTodos []Todo `json:"all_todos"`
		Reminder string `json:"reminder,omitempty"`
	}
	createManyOutput struct {
		Created  []Todo `json:"created"`
		AllTodos []Todo `json:"all_todos"`
		Reminder string `json:"reminder,omitempty"`
	}
	updateOutput struct {
		Updated  []Update `json:"updated,omitempty"`
		NotFound []string `json:"not_found,omitempty"`
		AllTodos []Todo   `json:"all_todos"`
		Reminder string   `json:"reminder,omitempty"`
	}
	listOutput struct {
		Todos    []Todo `json:"todos"`
		Reminder string `json:"reminder,omitempty"`
	}
)

// Options configure the toolset; todo has none that hitl uses (cagent's
// shared only matters between sub-agents).
type Options struct{}

// Toolset holds the run's list and makes its tools.
type Toolset struct {
	mu     sync.Mutex
	todos  []Todo
	nextID int
}

// New returns an empty list.
func New(Options) *Toolset { return &Toolset{} }

// Tools returns create_todo, create_todos, update_todos and list_todos.
func (s *Toolset) Tools() []exec.Tool {
	return []exec.Tool{
		&tool{s: s, spec: exec.ToolSpec{
			Name:        CreateTodo,
			Description: "Create a new todo item with a description",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"description":{"type":"string","description":"Description of the todo item"}},` +
				`"required":["description"],"additionalProperties":false}`),
		}, call: s.create},
		&tool{s: s, spec: exec.ToolSpec{
			Name:        CreateTodos,
			Description: "Create a list of new todo items with descriptions",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"descriptions":{"type":"array","items":{"type":"string"},"description":"Descriptions of the todo items"}},` +
				`"required":["descriptions"],"additionalProperties":false}`),
		}, call: s.createMany},
		&tool{s: s, spec: exec.ToolSpec{
			Name:        UpdateTodos,
			Description: "Update the status of one or more todo item(s)",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"updates":{"type":"array","description":"List of todo updates","items":{"type":"object","properties":{` +
				`"id":{"type":"string","description":"ID of the todo item"},` +
				`"status":{"type":"string","enum":["pending","in-progress","completed"],"description":"New status (pending, in-progress, completed)"}},` +
				`"required":["id","status"],"additionalProperties":false}}},` +
				`"required":["updates"],"additionalProperties":false}`),
		}, call: s.update},
		&tool{s: s, spec: exec.ToolSpec{
			Name:        ListTodos,
			Description: "List all current todos with their status",
			Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
		}, call: s.list},
	}
}

type tool struct {
	s    *Toolset
	spec exec.ToolSpec
	call func(json.RawMessage) (any, bool, error)
}

func (t *tool) Spec() exec.ToolSpec { return t.spec }

// Call runs the tool: its result is JSON in cagent's shape; bad arguments
// are error results.
func (t *tool) Call(_ context.Context, call exec.ToolCall) (exec.Result, error) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	out, isError, err := t.call(call.Arguments)
	if err != nil {
		return exec.Result{IsError: true, Text: err.Error()}, nil
	}
	data, err := json.Marshal(out)
	if err != nil {
		return exec.Result{}, fmt.Errorf("%s: %w", t.spec.Name, err)
	}
	return exec.Result{Text: string(data), IsError: isError}, nil
}

func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

func checkDescription(d string) error {
	switch {
	case strings.TrimSpace(d) == "":
		return fmt.Errorf("invalid arguments: a description is empty: say what the todo is")
	case utf8.RuneCountInString(d) > MaxDescription:
		return fmt.Errorf("invalid arguments: a description has more than %d characters", MaxDescription)
	}
	return nil
}

func (s *Toolset) room(n int) error {
	if len(s.todos)+n > MaxTodos {
		return fmt.Errorf("the list holds at most %d todos (it has %d): complete the work on the list before adding more", MaxTodos, len(s.todos))
	}
	return nil
}

func (s *Toolset) add(d string) Todo {
	s.nextID++
	t := Todo{ID: "todo_" + strconv.Itoa(s.nextID), Description: d, Status: Pending}
	s.todos = append(s.todos, t)
	return t
}

func (s *Toolset) all() []Todo { return slices.Clone(s.todos) }

func (s *Toolset) create(raw json.RawMessage) (any, bool, error) {
	var a struct {
		Description *string `json:"description"`
	}
	if err := decode(raw, &a); err != nil {
		return nil, false, err
	}
	if a.Description == nil {
		return nil, false, fmt.Errorf("invalid arguments: description is required")
	}
	if err := checkDescription(*a.Description); err != nil {
		return nil, false, err
	}
	if err := s.room(1); err != nil {
		return nil, false, err
	}
	created := s.add(*a.Description)
	return createOutput{Created: created, AllTodos: s.all(), Reminder: s.reminder()}, false, nil
}

func (s *Toolset) createMany(raw json.RawMessage) (any, bool, error) {
	var a struct {
		Descriptions *[]string `json:"descriptions"`
	}
	if err := decode(raw, &a); err != nil {
		return nil, false, err
	}
	if a.Descriptions == nil {
		return nil, false, fmt.Errorf("invalid arguments: descriptions is required")
	}
	for _, d := range *a.Descriptions {
		if err := checkDescription(d); err != nil {
			return nil, false, err
		}
	}
	if err := s.room(len(*a.Descriptions)); err != nil {
		return nil, false, err
	}
	created := make([]Todo, 0, len(*a.Descriptions))
	for _, d := range *a.Descriptions {
		created = append(created, s.add(d))
	}
	return createManyOutput{Created: created, AllTodos: s.all(), Reminder: s.reminder()}, false, nil
}

// update sets statuses. Like cagent's, unknown ids are listed in not_found;
// when no id was found the result is an error (and has no all_todos).
func (s *Toolset) update(raw json.RawMessage) (any, bool, error) {
	var a struct {
		Updates *[]Update `json:"updates"`
	}
	if err := decode(raw, &a); err != nil {
		return nil, false, err
	}
	if a.Updates == nil {
		return nil, false, fmt.Errorf("invalid arguments: updates is required")
	}
	for _, u := range *a.Updates {
		switch u.Status {
		case Pending, InProgress, Completed:
		default:
			return nil, false, fmt.Errorf("invalid arguments: status %q of %q is not one of pending, in-progress, completed", u.Status, u.ID)
		}
	}
	var out updateOutput
	for _, u := range *a.Updates {
		i := slices.IndexFunc(s.todos, func(t Todo) bool { return t.ID == u.ID })
		if i < 0 {
			out.NotFound = append(out.NotFound, u.ID)
			continue
		}
		s.todos[i].Status = u.Status
		out.Updated = append(out.Updated, u)
	}
	if len(out.NotFound) > 0 && len(out.Updated) == 0 {
		return out, true, nil
	}
	out.AllTodos = s.all()
	out.Reminder = s.reminder()
	return out, false, nil
}

func (s *Toolset) list(json.RawMessage) (any, bool, error) {
	todos := s.all()
	if todos == nil {
		todos = []Todo{}
	}
	return listOutput{Todos: todos, Reminder: s.reminder()}, false, nil
}

// reminder lists the todos not completed yet (in-progress first), or is
// empty when there are none.
func (s *Toolset) reminder() string {
	var b strings.Builder
	for _, status := range []string{InProgress, Pending} {
		for _, t := range s.todos {
			if t.Status == status {
				fmt.Fprintf(&b, " (%s) [%s] %s", status, t.ID, t.Description)
			}
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "The following todos are still incomplete and MUST be completed:" + b.String()
}

// Resume rebuilds the list from a resumed run's conversation: the list in
// the last result of a todo tool that is not an error (every such result
// carries the whole list). New ids continue after the highest one seen.
func (s *Toolset) Resume(msgs []exec.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.todos, s.nextID = nil, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != exec.RoleTool || m.IsError {
			continue
		}
		switch m.ToolName {
		case CreateTodo, CreateTodos, UpdateTodos, ListTodos:
		default:
			continue
		}
		var out struct {
			AllTodos *[]Todo `json:"all_todos"`
			Todos    *[]Todo `json:"todos"`
		}
		if err := json.Unmarshal([]byte(m.Text), &out); err != nil {
			return fmt.Errorf("todo list: the result of %s (call %s) is not a todo list: %w", m.ToolName, m.ToolCallID, err)
		}
		list := out.AllTodos
		if list == nil {
			list = out.Todos
		}
		if list == nil {
			return fmt.Errorf("todo list: the result of %s (call %s) has no list", m.ToolName, m.ToolCallID)
		}
		s.todos = slices.Clone(*list)
		for _, t := range s.todos {
			if n, err := strconv.Atoi(strings.TrimPrefix(t.ID, "todo_")); err == nil && n > s.nextID {
				s.nextID = n
			}
		}
		return nil
	}
	return nil
}
