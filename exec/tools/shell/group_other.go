//go:build !unix

package shell

import (
	"os"
	osexec "os/exec"
	"time"
)

// group is a no-op where process groups are not available: the command
// alone is killed on timeout or cancel.
type group struct{}

func newGroup(cmd *osexec.Cmd, grace time.Duration) *group {
	cmd.WaitDelay = grace
	return &group{}
}

func (*group) stop() {}

func signalOf(*os.ProcessState) (string, bool) { return "", false }

func (*group) track(bool) {}

// KillAll does nothing where process groups are not available.
func KillAll() {}
