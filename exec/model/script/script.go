package script

import (
	"github.com/hitl-dev/hitl/config"
)

type Model struct{}

func New(m *config.Model, message string) *Model { return &Model{} }
