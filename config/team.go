package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hitl-dev/hitl/internal/suggest"
	"gopkg.in/yaml.v3"
)

// MaxTransferDepth bounds how deeply transfer_task nests (DESIGN §13).
const MaxTransferDepth = 10

func (l *loader) agentRefs(n *yaml.Node, key string) []AgentRef {
	if !l.want(n, yaml.SequenceNode, "a list of agent names") {
		return nil
	}
	var out []AgentRef
	for _, item := range n.Content {
		name := l.str(item)
		if name == "" {
			l.errorf(item, "%s: an empty agent name", key)
			continue
		}
		if slices.ContainsFunc(out, func(r AgentRef) bool { return r.Name == name }) {
			l.errorf(item, "%s: %s is named twice", key, name)
			continue
		}
		out = append(out, AgentRef{Name: name, Pos: pos(item)})
	}
	return out
}

// checkTeam makes sure every name in sub_agents and handoffs is an agent of
// the file, and that no agent names itself.
func (l *loader) checkTeam() {
	names := make([]string, 0, len(l.cfg.Agents))
	for _, a := range l.cfg.Agents {
		names = append(names, a.Name)
	}
	check := func(a *Agent, key string, refs []AgentRef) {
		for _, r := range refs {
			switch {
			case strings.Contains(r.Name, "/") && !slices.Contains(names, r.Name):
				l.errs = append(l.errs, &Error{File: l.file, Pos: r.Pos, Msg: fmt.Sprintf("%s of agent %s: %s is an agent from a catalog (an OCI reference); agents from catalogs are not supported by hitl: define it in this file", key, a.Name, r.Name)})
			case r.Name == a.Name:
				l.errs = append(l.errs, &Error{File: l.file, Pos: r.Pos, Msg: fmt.Sprintf("%s of agent %s names the agent itself", key, a.Name)})
			case !slices.Contains(names, r.Name):
				msg := fmt.Sprintf("%s of agent %s: no agent %s in this file (its agents: %s)", key, a.Name, r.Name, strings.Join(names, ", "))
				if s := suggest.DidYouMean(r.Name, names); s != "" {
					msg = fmt.Sprintf("%s of agent %s: no agent %s in this file%s", key, a.Name, r.Name, s)
				}
				l.errs = append(l.errs, &Error{File: l.file, Pos: r.Pos, Msg: msg})
			}
		}
	}
	for _, a := range l.cfg.Agents {
		check(a, "sub_agents", a.SubAgents)
		check(a, "handoffs", a.Handoffs)
		if a.usesBackground() && len(a.SubAgents) == 0 {
			l.errs = append(l.errs, &Error{File: l.file, Pos: a.Pos, Msg: fmt.Sprintf("agent %s has a background_agents toolset but no sub_agents: name the agents it may run in the background", a.Name)})
		}
	}
}

func (a *Agent) usesBackground() bool {
	return slices.ContainsFunc(a.Toolsets, func(ts *Toolset) bool { return ts.Type == "background_agents" })
}

// TeamNote is a note on a team of agents, where it can be seen.
type TeamNote struct {
	Pos Pos
	Msg string
}

// TeamCycles notes each sub_agents entry that closes a cycle (a transfers
// to b, which may transfer back to a): hitl refuses such a transfer when
// it would happen, so the file still runs.
func TeamCycles(c *Config) []TeamNote {
	var notes []TeamNote
	state := map[string]int{} // 0 unseen, 1 on the path, 2 done
	var path []string
	var visit func(a *Agent)
	visit = func(a *Agent) {
		state[a.Name] = 1
		path = append(path, a.Name)
		for _, r := range a.SubAgents {
			next := c.Agent(r.Name)
			if next == nil {
				continue
			}
			switch state[r.Name] {
			case 1:
				i := slices.Index(path, r.Name)
				loop := append(slices.Clone(path[i:]), r.Name)
				notes = append(notes, TeamNote{Pos: r.Pos, Msg: fmt.Sprintf("sub_agents of agent %s closes a cycle (%s): a transfer_task that would close it is refused when it happens", a.Name, strings.Join(loop, " → "))})
			case 0:
				visit(next)
			}
		}
		path = path[:len(path)-1]
		state[a.Name] = 2
	}
	for _, a := range c.Agents {
		if state[a.Name] == 0 {
			visit(a)
		}
	}
	return notes
}
