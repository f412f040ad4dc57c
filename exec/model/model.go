// Package model builds the Model a config names: the script model, or an
// HTTP provider (openai, ollama, anthropic).
package model

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model/script"
)

// Options are what a provider needs from the run beyond its config.
type Options struct {
	// Getenv looks up environment variables (keys, base URLs).
	Getenv func(string) string
	// HTTPClient is shared across turns (keep-alive); nil means a default.
	HTTPClient *http.Client
	// Now is the clock (frozen when replaying a cassette).
	Now func() time.Time
	// Message is the first user turn (the script model's .Message).
	Message string
}

// New returns the model m describes.
func New(m *config.Model, o Options) (exec.Model, error) {
	switch m.Provider {
	case "script":
		return script.New(m, o.Message), nil
	default:
		return nil, fmt.Errorf("model %s: provider %q is not available yet", m.Name, m.Provider)
	}
}
