// Command hitl-temporal runs hitl agents on Temporal (DESIGN §17): worker,
// start, list, answer, result.
package main

import (
	"os"

	"github.com/hitl-dev/hitl/contrib/temporal/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
