package model

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

// The model_picker's tools (cagent's names).
const (
	ChangeModelTool = "change_model"
	RevertModelTool = "revert_model"
)

// Switch is an agent's model when some turns go to other models, as cagent
// routes them:
//   - a toolset's model: reads that toolset's results: the turn right after
//     a turn whose calls include one of its tools (the first such call, in
//     order) runs on it, and only that turn;
//   - a model_picker's change_model switches the agent's turns to the
//     chosen model until revert_model (a toolset's model: still wins for
//     the turn after its results).
//
// Which model a turn takes is read from the conversation itself (the last
// turn's calls; the last successful change_model or revert_model), so a
// resumed run takes the same one.
type Switch struct {
	base  exec.Model
	names []string // the other models' references, in a fixed order
	alts  map[string]exec.Model
	// Tools names the model (a reference of names) of each tool whose
	// toolset has model:; filled when the agent's tools are built, before
	// the first turn.
	Tools map[string]string

	mu sync.Mutex
}

// NewSwitch makes base's switch to the models by reference (made with o).
func NewSwitch(base exec.Model, models map[string]*config.Model, order []string, o Options) (*Switch, error) {
	s := &Switch{base: base, alts: map[string]exec.Model{}, Tools: map[string]string{}}
	for _, ref := range order {
		if _, dup := s.alts[ref]; dup {
			continue
		}
		m, err := New(models[ref], o)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", ref, err)
		}
		s.alts[ref] = m
		s.names = append(s.names, ref)
	}
	return s, nil
}

// Turn runs the turn on the model the conversation calls for.
func (s *Switch) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	m := s.base
	ref := s.pick(req.Messages)
	if ref != "" {
		m = s.alts[ref]
	}
	turn, err := m.Turn(ctx, req)
	if err != nil {
		return turn, err
	}
	// Two models each number their calls (the script model: call_1_1):
	// an id the conversation already holds gets the model's name in it,
	// as answers and questions are kept by call id.
	used := map[string]bool{}
	for _, h := range req.Messages {
		for _, c := range h.ToolCalls {
			used[c.ID] = true
		}
	}
	for i, c := range turn.Message.ToolCalls {
		if used[c.ID] {
			name := ref
			if name == "" {
				name = "base"
			}
			turn.Message.ToolCalls[i].ID = name + "-" + c.ID
		}
		used[turn.Message.ToolCalls[i].ID] = true
	}
	return turn, nil
}

// Current is the reference of the model the next turn of msgs runs on ("":
// the agent's own).
func (s *Switch) Current(msgs []exec.Message) string { return s.pick(msgs) }

func (s *Switch) pick(msgs []exec.Message) string {
	if ref := s.afterTools(msgs); ref != "" {
		return ref
	}
	return s.picked(msgs)
}

// afterTools is the model: of the first call's toolset, when the turn
// answers a turn of calls.
func (s *Switch) afterTools(msgs []exec.Message) string {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != exec.RoleTool {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != exec.RoleAssistant {
			continue
		}
		for _, c := range msgs[i].ToolCalls {
			if ref := s.Tools[c.Name]; ref != "" {
				if _, ok := s.alts[ref]; ok {
					return ref
				}
			}
		}
		return ""
	}
	return ""
}

// picked is the model the last successful change_model chose, unless a
// revert_model came after it.
func (s *Switch) picked(msgs []exec.Message) string {
	ok := map[string]bool{} // call ids whose result is not an error
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == exec.RoleTool && !m.IsError {
			ok[m.ToolCallID] = true
			continue
		}
		if m.Role != exec.RoleAssistant {
			continue
		}
		for j := len(m.ToolCalls) - 1; j >= 0; j-- {
			c := m.ToolCalls[j]
			if !ok[c.ID] {
				continue
			}
			switch c.Name {
			case RevertModelTool:
				return ""
			case ChangeModelTool:
				var args struct {
					Model string `json:"model"`
				}
				if json.Unmarshal(c.Arguments, &args) == nil {
					if _, known := s.alts[args.Model]; known {
						return args.Model
					}
				}
				return ""
			}
		}
	}
	return ""
}

type switchState struct {
	Base   json.RawMessage            `json:"base,omitempty"`
	Models map[string]json.RawMessage `json:"models,omitempty"`
}

// State is each model's own state (a script model's position).
func (s *Switch) State() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st switchState
	if b, ok := s.base.(stateful); ok {
		st.Base = b.State()
	}
	for _, ref := range s.names {
		if m, ok := s.alts[ref].(stateful); ok {
			if st.Models == nil {
				st.Models = map[string]json.RawMessage{}
			}
			st.Models[ref] = m.State()
		}
	}
	data, _ := json.Marshal(st)
	return data
}

// Restore sets the state saved by State.
func (s *Switch) Restore(data json.RawMessage) error {
	var st switchState
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.base.(stateful); ok && len(st.Base) > 0 {
		if err := b.Restore(st.Base); err != nil {
			return err
		}
	}
	for ref, saved := range st.Models {
		if m, ok := s.alts[ref].(stateful); ok && len(saved) > 0 {
			if err := m.Restore(saved); err != nil {
				return fmt.Errorf("model %s: %w", ref, err)
			}
		}
	}
	return nil
}
