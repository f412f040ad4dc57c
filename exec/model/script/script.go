// Package script is the embedded offline model: it plays the assistant turns
// written in the agent file.
package script

import (
	"context"
	"errors"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

type Model struct{}

func New(m *config.Model, message string) *Model { return &Model{} }

func (m *Model) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	return exec.Turn{}, errors.New("todo")
}
