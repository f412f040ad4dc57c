package prompt

import (
	"encoding/json"
	"strings"
)

// yesNoWords are the string values that make an enum a yes/no (DESIGN §4).
var yesNoWords = map[string]bool{
	"yes": true, "no": true, "y": true, "n": true, "true": true, "false": true,
	"ok": true, "approve": true, "allow": true, "confirm": true, "proceed": true,
	"deny": true, "reject": true, "cancel": true,
}

// YesNoWord reports whether s, in any case, is one of the yes/no words.
func YesNoWord(s string) bool { return yesNoWords[strings.ToLower(strings.TrimSpace(s))] }

// SchemaConsent reports whether a JSON Schema can express yes/no, which
// makes a question asking for it a consent question (DESIGN §4): type
// boolean, an enum or const holding a boolean or a yes/no word, no type at
// all (any value fits, a boolean among them), anyOf, oneOf, allOf or a
// local $ref reaching such a schema, or an object or array with such a
// property, pattern property, dependent schema, item or contained item. A
// schema too deep to look through, or a reference resolved only when
// validating ($dynamicRef), counts as consent (fail closed); one that is
// not JSON does not (it does not compile either).
func SchemaConsent(raw json.RawMessage) bool {
	var root any
	if json.Unmarshal(raw, &root) != nil {
		return false
	}
	return newConsentWalk(root).reaches(root, 0)
}

// maxSchemaDepth bounds the walk through nested and referenced schemas.
const maxSchemaDepth = 64

type consentWalk struct {
	root any
	seen map[string]bool // $refs followed
}

func newConsentWalk(root any) *consentWalk {
	return &consentWalk{root: root, seen: map[string]bool{}}
}

func (w *consentWalk) reaches(n any, depth int) bool {
	return w.reachesIn(n, depth, false)
}

// reachesIn is reaches; refining is true for a branch of allOf, which only
// narrows what its siblings admit, so that having no type of its own does
// not make it admit a boolean.
func (w *consentWalk) reachesIn(n any, depth int, refining bool) bool {
	if depth > maxSchemaDepth {
		return true
	}
	if b, ok := n.(bool); ok {
		return b && !refining // the schema true admits any value
	}
	obj, ok := n.(map[string]any)
	if !ok {
		return false // not a schema
	}
	if !refining && admitsAnyType(obj) {
		// No type, enum, const, reference or alternatives: any JSON
		// value fits, true and false among them.
		return true
	}
	switch t := obj["type"].(type) {
	case string:
		if t == "boolean" {
			return true
		}
	case []any:
		for _, x := range t {
			if x == "boolean" {
				return true
			}
		}
	}
	if c, ok := obj["const"]; ok && yesNoValue(c) {
		return true
	}
	if enum, ok := obj["enum"].([]any); ok {
		for _, v := range enum {
			if yesNoValue(v) {
				return true
			}
		}
	}
	for _, key := range []string{"anyOf", "oneOf", "prefixItems"} {
		if list, ok := obj[key].([]any); ok {
			for _, sub := range list {
				if w.reachesIn(sub, depth+1, false) {
					return true
				}
			}
		}
	}
	if list, ok := obj["allOf"].([]any); ok {
		for _, sub := range list {
			if w.reachesIn(sub, depth+1, true) {
				return true
			}
		}
	}
	for _, key := range []string{"items", "contains", "then", "else"} {
		if sub, ok := obj[key]; ok && w.reachesIn(sub, depth+1, false) {
			return true
		}
	}
	// Extra properties or items: "true" there (any extra allowed) is as
	// open as leaving the key out, which names no field; a schema for
	// them is looked through.
	for _, key := range []string{"additionalItems", "unevaluatedItems", "additionalProperties", "unevaluatedProperties"} {
		if sub, ok := obj[key].(map[string]any); ok && w.reachesIn(sub, depth+1, false) {
			return true
		}
	}
	for _, key := range []string{"properties", "patternProperties", "dependentSchemas", "dependencies"} {
		if props, ok := obj[key].(map[string]any); ok {
			for _, sub := range props {
				// dependencies also holds lists of names: not schemas.
				if w.reachesIn(sub, depth+1, false) {
					return true
				}
			}
		}
	}
	for _, key := range []string{"$dynamicRef", "$recursiveRef"} {
		if _, ok := obj[key]; ok {
			return true // resolved at validation time only: fail closed
		}
	}
	if ref, ok := obj["$ref"].(string); ok && !w.seen[ref] {
		w.seen[ref] = true
		target, found := w.resolve(ref)
		if !found {
			return true // a $ref hitl cannot follow: fail closed
		}
		if w.reachesIn(target, depth+1, false) {
			return true
		}
	}
	return false
}

// admitsAnyType reports whether a schema object leaves the type of its
// value open: nothing in it, nor in an allOf it holds, restricts the type.
func admitsAnyType(obj map[string]any) bool {
	for _, key := range []string{"type", "enum", "const", "$ref", "$dynamicRef", "$recursiveRef", "anyOf", "oneOf"} {
		if _, ok := obj[key]; ok {
			return false
		}
	}
	if list, ok := obj["allOf"].([]any); ok {
		for _, sub := range list {
			if o, ok := sub.(map[string]any); ok && !admitsAnyType(o) {
				return false
			}
			if b, ok := sub.(bool); ok && !b {
				return false
			}
		}
	}
	return true
}

// yesNoValue reports whether an enum or const value says yes or no.
func yesNoValue(v any) bool {
	switch x := v.(type) {
	case bool:
		return true
	case string:
		return YesNoWord(x)
	}
	return false
}

// resolve follows a local $ref ("#", "#/$defs/x", "#/definitions/x").
func (w *consentWalk) resolve(ref string) (any, bool) {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	n := w.root
	if ptr == "" {
		return n, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		obj, ok := n.(map[string]any)
		if !ok {
			return nil, false
		}
		if n, ok = obj[tok]; !ok {
			return nil, false
		}
	}
	return n, true
}
