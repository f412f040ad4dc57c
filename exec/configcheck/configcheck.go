// Package configcheck gives config the checks of the formats other
// packages own, so config stays a leaf the rest builds on: a JSON Schema
// is prompt/schema's, a toon: pattern exec/tools/toon's.
package configcheck

import (
	"encoding/json"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/tools/toon"
	"github.com/hitl-dev/hitl/prompt/schema"
)

// Checks are the owners' checks, for config.Load and config.Parse.
func Checks() config.Checks {
	return config.Checks{
		JSONSchema: func(s json.RawMessage) error {
			_, err := schema.Compile(s)
			return err
		},
		ToolNames: func(pattern string) error {
			_, err := toon.Compile(pattern)
			return err
		},
	}
}
