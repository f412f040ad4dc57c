// Package yamlsize bounds what a YAML value becomes once decoded: aliases
// let a small document name one large value many times ("billion laughs"),
// and decoding copies it each time.
package yamlsize

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// nodeCost is what one node counts for besides its text, so a value made of
// many small nodes is bounded too.
const nodeCost = 16

// Error says a value expands past the bound.
type Error struct {
	Limit int64
}

func (e *Error) Error() string {
	return fmt.Sprintf("this value expands (through YAML aliases) to more than %s", size(e.Limit))
}

// Check walks n as decoding would, following aliases, and returns an *Error
// once the text of its scalars and keys (plus a small cost per node) passes
// limit. It stops there, so its own work is bounded by limit.
func Check(n *yaml.Node, limit int64) error {
	w := walker{left: limit}
	if !w.walk(n) {
		return &Error{Limit: limit}
	}
	return nil
}

type walker struct{ left int64 }

func (w *walker) walk(n *yaml.Node) bool {
	if n == nil {
		return true
	}
	w.left -= nodeCost + int64(len(n.Value))
	if w.left < 0 {
		return false
	}
	if n.Kind == yaml.AliasNode {
		return w.walk(n.Alias)
	}
	for _, c := range n.Content {
		if !w.walk(c) {
			return false
		}
	}
	return true
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
