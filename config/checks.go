package config

import (
	"encoding/json"
	"errors"
)

// Checks check the values of an agent file whose format another package
// owns: config reads a value and knows where it is, its owner says whether
// it is valid (exec/configcheck gives the real ones). A check left nil
// refuses every such value: nothing unchecked runs.
type Checks struct {
	// JSONSchema compiles a JSON Schema (structured_output's schema).
	JSONSchema func(json.RawMessage) error
	// ToolNames compiles a toolset's toon: pattern of tool names.
	ToolNames func(string) error
}

var errNoCheck = errors.New("hitl has no check for this value (a bug in hitl: config.Checks is incomplete)")

func (c Checks) jsonSchema(s json.RawMessage) error {
	if c.JSONSchema == nil {
		return errNoCheck
	}
	return c.JSONSchema(s)
}

func (c Checks) toolNames(pattern string) error {
	if c.ToolNames == nil {
		return errNoCheck
	}
	return c.ToolNames(pattern)
}
