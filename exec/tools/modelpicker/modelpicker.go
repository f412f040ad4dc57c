// Package modelpicker is cagent's model_picker toolset: change_model
// switches the agent's turns to one of the models the file lists,
// revert_model back to the agent's own. The tools only check and answer;
// the agent's model (model.Switch) reads the choice from the conversation.
// Neither acts on the world: they never ask.
package modelpicker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
)

// Instructions is the toolset's guidance for the system prompt (cagent's).
func Instructions(models []string) string {
	return "## Model Switching\n\nAvailable models: " + strings.Join(models, ", ") + ".\n\n" +
		"Use `change_model` to switch to a model better suited for the current task (e.g., faster model for simple tasks, more capable model for complex reasoning).\n" +
		"Use `revert_model` to return to the original model when done."
}

// New returns the two tools for models (the references as the file
// writes them: the values change_model takes).
func New(models []string) []exec.Tool {
	return []exec.Tool{&change{models: models}, revert{}}
}

type change struct{ models []string }

func (c *change) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name:        model.ChangeModelTool,
		Description: "Change the current model to one of the available models: " + strings.Join(c.models, ", ") + ". Use this when you need a different model for the current task.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"model":{"type":"string","description":"The model to switch to. Must be one of the available models."}},"required":["model"],"additionalProperties":false}`),
	}
}

func (c *change) Call(_ context.Context, call exec.ToolCall) (exec.Result, error) {
	var args struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return exec.Result{Text: fmt.Sprintf("invalid arguments: %v", err), IsError: true}, nil
	}
	if args.Model == "" {
		return exec.Result{Text: "model parameter is required", IsError: true}, nil
	}
	if !slices.Contains(c.models, args.Model) {
		return exec.Result{Text: fmt.Sprintf("model %q is not in the allowed list. Available models: %s", args.Model, strings.Join(c.models, ", ")), IsError: true}, nil
	}
	return exec.Result{Text: "Model changed to " + args.Model}, nil
}

type revert struct{}

func (revert) Spec() exec.ToolSpec {
	return exec.ToolSpec{
		Name:        model.RevertModelTool,
		Description: "Revert to the agent's original/default model. Use this after completing a task that required a different model.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
	}
}

func (revert) Call(context.Context, exec.ToolCall) (exec.Result, error) {
	return exec.Result{Text: "Model reverted to the agent's default model"}, nil
}
