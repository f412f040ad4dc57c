package cmd

import (
	"os"

	"github.com/hitl-dev/hitl/prompt"
	"github.com/hitl-dev/hitl/prompt/tty"
)

// The terminal front end (survey) is registered here so that only
// prompt/tty imports survey.
func init() {
	NewTTYFrontEnd = func(in, out *os.File) (prompt.FrontEnd, error) {
		return tty.New(in, out), nil
	}
}
