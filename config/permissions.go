package config

import (
	"github.com/hitl-dev/hitl/exec/permissions/rule"
	"gopkg.in/yaml.v3"
)

var permissionKeys = []string{"allow", "ask", "deny"}

func (l *loader) permissions(n *yaml.Node) {
	if !l.want(n, yaml.MappingNode, "a mapping with allow, ask, deny") {
		return
	}
	p := &l.cfg.Permissions
	l.eachKey(n, "permissions key", permissionKeys, nil, func(key string, k, v *yaml.Node) {
		list := l.strings(v)
		for i, text := range list {
			if _, err := rule.Parse(text); err != nil {
				l.errorf(v.Content[i], "permissions.%s: %v", key, err)
			}
		}
		switch key {
		case "allow":
			p.Allow = list
		case "ask":
			p.Ask = list
		case "deny":
			p.Deny = list
		}
	})
}
