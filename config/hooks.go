package config

import (
	"regexp"
	"time"

	"gopkg.in/yaml.v3"
)

// Hook events (cagent's, and hitl's permission_request).
const (
	HookPreToolUse        = "pre_tool_use"
	HookPostToolUse       = "post_tool_use"
	HookPermissionRequest = "permission_request"
	HookSessionStart      = "session_start"
	HookSessionEnd        = "session_end"
	HookOnUserInput       = "on_user_input"
)

// DefaultHookTimeout bounds a hook without timeout: (cagent's 60 s);
// MaxHookTimeout bounds any.
const (
	DefaultHookTimeout = 60 * time.Second
	MaxHookTimeout     = 10 * time.Minute
)

// toolHookEvents take matcher entries; the others a list of hooks.
var (
	toolHookEvents  = []string{HookPreToolUse, HookPostToolUse, HookPermissionRequest}
	plainHookEvents = []string{HookSessionStart, HookSessionEnd, HookOnUserInput}
)

// Hooks are an agent's hooks: commands run at points of its run.
type Hooks struct {
	// Tool holds the matcher entries of the tool events.
	Tool map[string][]HookMatcher
	// Plain holds the hooks of the other events.
	Plain map[string][]Hook
}

// HookMatcher is hooks for the tools whose name Matcher matches (the
// whole name: "" and "*" match every tool).
type HookMatcher struct {
	Matcher *regexp.Regexp // nil: every tool
	Hooks   []Hook
}

// Hook is one command hook.
type Hook struct {
	Command string
	Timeout time.Duration
	Pos     Pos
}

func (l *loader) hooks(n *yaml.Node) *Hooks {
	h := &Hooks{Tool: map[string][]HookMatcher{}, Plain: map[string][]Hook{}}
	events := append(append([]string(nil), toolHookEvents...), plainHookEvents...)
	l.eachKey(n, "hooks event", events, nil, func(event string, k, v *yaml.Node) {
		if contains(toolHookEvents, event) {
			h.Tool[event] = mappings(l, v, "a list of {matcher, hooks}", "a matcher entry {matcher, hooks}", func(m *yaml.Node) HookMatcher {
				var hm HookMatcher
				var hooksNode *yaml.Node
				l.eachKey(m, "hooks."+event+" key", []string{"matcher", "hooks"}, nil, func(key string, k, v *yaml.Node) {
					switch key {
					case "matcher":
						if p := l.str(v); p != "" && p != "*" {
							re, err := regexp.Compile("^(?:" + p + ")$")
							if err != nil {
								l.errorf(v, "hooks.%s matcher %q is not a regular expression: %v", event, p, err)
							}
							hm.Matcher = re
						}
					case "hooks":
						hooksNode = v
						hm.Hooks = l.hookList(v, event)
					}
				})
				if hooksNode == nil || len(hm.Hooks) == 0 {
					l.errorf(m, "hooks.%s: a matcher entry needs at least one hook under hooks:", event)
				}
				return hm
			})
			return
		}
		h.Plain[event] = l.hookList(v, event)
	})
	return h
}

func (l *loader) hookList(n *yaml.Node, event string) []Hook {
	return mappings(l, n, "a list of hooks {type: command, command, timeout}", "a hook {type: command, command, timeout}", func(m *yaml.Node) Hook {
		hk := Hook{Timeout: DefaultHookTimeout, Pos: pos(m)}
		var typ string
		l.eachKey(m, "hook key", []string{"type", "command", "timeout"}, nil, func(key string, k, v *yaml.Node) {
			switch key {
			case "type":
				typ = l.str(v)
				if typ != "command" {
					l.errorf(v, "hooks.%s: hook type %q: the only type is command", event, typ)
				}
			case "command":
				hk.Command = l.str(v)
			case "timeout":
				if s := l.integer(v, 1); s > 0 {
					hk.Timeout = time.Duration(s) * time.Second
					if hk.Timeout > MaxHookTimeout {
						l.errorf(v, "hooks.%s: timeout %d s is more than hitl's bound of %s", event, s, MaxHookTimeout)
					}
				}
			}
		})
		if typ == "" {
			l.errorf(m, "hooks.%s: a hook needs type: command", event)
		}
		if hk.Command == "" {
			l.errorf(m, "hooks.%s: a hook needs a command", event)
		}
		return hk
	})
}

// Matching returns the hooks of a tool event for tool, in file order,
// each command once.
func (h *Hooks) Matching(event, tool string) []Hook {
	if h == nil {
		return nil
	}
	var out []Hook
	seen := map[string]bool{}
	for _, m := range h.Tool[event] {
		if m.Matcher != nil && !m.Matcher.MatchString(tool) {
			continue
		}
		for _, hk := range m.Hooks {
			if !seen[hk.Command] {
				seen[hk.Command] = true
				out = append(out, hk)
			}
		}
	}
	return out
}
