//go:build unix

package shell

import (
	"github.com/hitl-dev/hitl/internal/procgroup"
	"os"
	osexec "os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// group is a command's process group: the command is its leader, so
// everything it starts (unless it leaves the group) can be signalled at once.
type group struct {
	cmd   *osexec.Cmd
	grace time.Duration

	mu     sync.Mutex
	termAt time.Time // when SIGTERM was sent
}

// newGroup makes cmd start in its own process group, and its context's end
// signal the whole group: SIGTERM now, SIGKILL after grace (stop).
func newGroup(cmd *osexec.Cmd, grace time.Duration) *group {
	g := &group{cmd: cmd, grace: grace}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		g.term()
		return nil
	}
	// Wait kills the leader itself if it outlives the grace; stop then
	// kills the rest of the group.
	cmd.WaitDelay = grace
	return g
}

func (g *group) pgid() int { return g.cmd.Process.Pid }

// term sends SIGTERM to the group, and SIGCONT so stopped members (a
// background job that tried to read the terminal) can act on it.
func (g *group) term() {
	g.mu.Lock()
	if g.termAt.IsZero() {
		g.termAt = time.Now()
	}
	g.mu.Unlock()
	_ = syscall.Kill(-g.pgid(), syscall.SIGTERM)
	_ = syscall.Kill(-g.pgid(), syscall.SIGCONT)
}

// stop ends whatever is left of the group once the command has exited:
// SIGTERM, then SIGKILL when members remain after the grace. It returns at
// once when nothing is left.
func (g *group) stop() {
	if g.cmd.Process == nil || !procgroup.Alive(g.pgid()) {
		return
	}
	g.term()
	g.mu.Lock()
	deadline := g.termAt.Add(g.grace)
	g.mu.Unlock()
	if g.waitGone(deadline) {
		return
	}
	_ = syscall.Kill(-g.pgid(), syscall.SIGKILL)
	// SIGKILL takes effect asynchronously: wait (bounded) until the
	// members are gone, so nothing runs once the call returns.
	g.waitGone(time.Now().Add(time.Second))
}

// waitGone polls until the group has no live member or deadline passes.
func (g *group) waitGone(deadline time.Time) bool {
	for time.Now().Before(deadline) {
		if !procgroup.Alive(g.pgid()) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return !procgroup.Alive(g.pgid())
}

// signalOf names the signal that ended a process, if one did.
func signalOf(ps *os.ProcessState) (string, bool) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	if name := unix.SignalName(ws.Signal()); name != "" {
		return name, true
	}
	return ws.Signal().String(), true
}

// running holds the process groups of commands in flight, so KillAll can
// end them when hitl must exit at once.
var running = struct {
	sync.Mutex
	pgids map[int]bool
}{pgids: map[int]bool{}}

func (g *group) track(on bool) {
	running.Lock()
	defer running.Unlock()
	if on {
		running.pgids[g.pgid()] = true
	} else {
		delete(running.pgids, g.pgid())
	}
}

// KillAll sends SIGKILL to the process group of every command still running:
// for a second Ctrl-C, which exits without waiting for the grace period.
func KillAll() {
	running.Lock()
	defer running.Unlock()
	for pgid := range running.pgids {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
