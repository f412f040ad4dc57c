// Command hitl runs an LLM agent from a shell, headless, with a human in the
// loop.
package main

import (
	"os"

	"github.com/hitl-dev/hitl/cmd"
)

func main() { os.Exit(cmd.Main()) }
