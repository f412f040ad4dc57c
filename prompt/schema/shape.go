package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// A shape is a schema document checked before the library sees it: every
// subschema indexed by its JSON Pointer, each $ref resolved to one of them,
// and the keyword values the metaschema would refuse refused here, saying
// where. The library itself checks little of this (a "type" it does not
// know fails every value; a $ref that leads back to itself recurses until
// the process dies), and a model writes schemas.
type shape struct {
	doc     any
	nodes   map[string]*node
	anchors map[string]string
	dynamic map[string][]string // $dynamicAnchor name → where
}

// A node is one subschema: an object, or true/false.
type node struct {
	ptr string
	m   map[string]any // nil for a boolean schema
	// inPlace are the subschemas applied to the same value ($ref, allOf,
	// anyOf, oneOf, not, if/then/else, dependentSchemas); deeper are those
	// applied to a part of it (properties, items and the like).
	inPlace, deeper []string
	ref             string // the raw $ref, resolved into inPlace
	dynRef          string // the raw $dynamicRef, resolved into inPlace
}

func (sh *shape) root() *node { return sh.nodes[""] }

// Drafts: what $schema may name. Draft 2020-12 is the default; draft-07
// (and draft-06, which it only extends) are validated as draft-07.
const (
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
	draft7    = "http://json-schema.org/draft-07/schema#"
)

func draftOf(s string) (string, error) {
	u := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s, "http://"), "https://"), "#")
	switch u {
	case "json-schema.org/draft/2020-12/schema", "json-schema.org/schema":
		return draft2020, nil
	case "json-schema.org/draft-07/schema", "json-schema.org/draft-06/schema":
		return draft7, nil
	}
	return "", fmt.Errorf("$schema %q is not a draft hitl validates: use draft 2020-12 (the default: leave $schema out) or draft-07", s)
}

var typeNames = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// Keywords by the shape of their value.
var (
	inPlaceOne   = []string{"not", "if", "then", "else"}
	inPlaceMany  = []string{"allOf", "anyOf", "oneOf"}
	inPlaceMap   = []string{"dependentSchemas", "dependencies"}
	deeperOne    = []string{"additionalProperties", "additionalItems", "unevaluatedItems", "unevaluatedProperties", "contains", "propertyNames"}
	deeperMap    = []string{"properties", "patternProperties"}
	noEdgeMap    = []string{"$defs", "definitions"}
	numberWords  = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
	countWords   = []string{"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"}
	stringWords  = []string{"pattern", "format", "title", "description", "$ref", "$anchor", "$id", "$comment", "$schema", "$dynamicRef", "$dynamicAnchor"}
	refusedWords = []string{"$recursiveRef", "$recursiveAnchor"}
)

// analyse checks doc and indexes its subschemas.
func analyse(doc any) (*shape, error) {
	sh := &shape{doc: doc, nodes: map[string]*node{}, anchors: map[string]string{}, dynamic: map[string][]string{}}
	if m, ok := doc.(map[string]any); ok {
		if s, ok := m["$schema"].(string); ok {
			d, err := draftOf(s)
			if err != nil {
				return nil, err
			}
			m["$schema"] = d
		}
	}
	if err := sh.visit(doc, ""); err != nil {
		return nil, err
	}
	for _, n := range sh.nodes {
		if n.dynRef != "" {
			// Where a $dynamicRef lands depends on the path taken: for
			// loops, it may land on its static target or on any
			// $dynamicAnchor of the same name.
			target, err := sh.resolveRef(n.dynRef)
			if err != nil {
				return nil, fmt.Errorf("%s$dynamicRef %q: %w", at(n.ptr), n.dynRef, err)
			}
			n.inPlace = append(n.inPlace, target)
			if name, ok := strings.CutPrefix(n.dynRef, "#"); ok {
				n.inPlace = append(n.inPlace, sh.dynamic[name]...)
			}
		}
		if n.ref != "" { // last: the $ref's target is inPlace's last
			target, err := sh.resolveRef(n.ref)
			if err != nil {
				return nil, fmt.Errorf("%s$ref %q: %w", at(n.ptr), n.ref, err)
			}
			n.inPlace = append(n.inPlace, target)
		}
	}
	order, err := sh.checkLoops()
	if err != nil {
		return nil, err
	}
	if err := sh.checkFanOut(order); err != nil {
		return nil, err
	}
	return sh, nil
}

func at(ptr string) string {
	if ptr == "" {
		return ""
	}
	return "at " + ptr + ": "
}

func (sh *shape) visit(v any, ptr string) error {
	if _, ok := v.(bool); ok {
		sh.nodes[ptr] = &node{ptr: ptr}
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%sa schema must be an object or true or false, not %s", at(ptr), kind(v))
	}
	n := &node{ptr: ptr, m: m}
	sh.nodes[ptr] = n
	if err := checkKeywords(m, ptr); err != nil {
		return err
	}
	if ptr != "" {
		if _, ok := m["$schema"]; ok {
			return fmt.Errorf("%s$schema is only read at the top of the schema", at(ptr))
		}
		if _, ok := m["$id"]; ok {
			return fmt.Errorf("%san $id inside the schema is not supported: refer to subschemas with $ref \"#/$defs/…\"", at(ptr))
		}
	}
	if a, ok := m["$anchor"].(string); ok {
		if prev, dup := sh.anchors[a]; dup {
			return fmt.Errorf("%s$anchor %q is also at %s", at(ptr), a, prev)
		}
		sh.anchors[a] = ptr
	}
	if a, ok := m["$dynamicAnchor"].(string); ok {
		if prev, dup := sh.anchors[a]; dup {
			return fmt.Errorf("%s$dynamicAnchor %q is also an anchor at %s", at(ptr), a, prev)
		}
		sh.anchors[a] = ptr // also a plain anchor
		sh.dynamic[a] = append(sh.dynamic[a], ptr)
	}
	if r, ok := m["$ref"].(string); ok {
		n.ref = r
	}
	if r, ok := m["$dynamicRef"].(string); ok {
		n.dynRef = r
	}
	child := func(into *[]string, p string, c any) error {
		*into = append(*into, p)
		return sh.visit(c, p)
	}
	for _, k := range inPlaceOne {
		if c, ok := m[k]; ok {
			if err := child(&n.inPlace, ptr+"/"+k, c); err != nil {
				return err
			}
		}
	}
	for _, k := range deeperOne {
		if c, ok := m[k]; ok {
			if err := child(&n.deeper, ptr+"/"+k, c); err != nil {
				return err
			}
		}
	}
	for _, k := range inPlaceMany {
		if err := each(m, k, ptr, func(p string, c any) error { return child(&n.inPlace, p, c) }); err != nil {
			return err
		}
	}
	if c, ok := m["prefixItems"]; ok {
		if _, isArray := c.([]any); !isArray {
			return fmt.Errorf("%sprefixItems must be an array of schemas", at(ptr))
		}
		if err := each(m, "prefixItems", ptr, func(p string, c any) error { return child(&n.deeper, p, c) }); err != nil {
			return err
		}
	}
	if c, ok := m["items"]; ok {
		if _, isArray := c.([]any); isArray {
			if err := each(m, "items", ptr, func(p string, c any) error { return child(&n.deeper, p, c) }); err != nil {
				return err
			}
		} else if err := child(&n.deeper, ptr+"/items", c); err != nil {
			return err
		}
	}
	for _, k := range inPlaceMap {
		if err := members(m, k, ptr, true, func(p string, c any) error { return child(&n.inPlace, p, c) }); err != nil {
			return err
		}
	}
	for _, k := range deeperMap {
		if err := members(m, k, ptr, false, func(p string, c any) error { return child(&n.deeper, p, c) }); err != nil {
			return err
		}
	}
	for _, k := range noEdgeMap {
		if err := members(m, k, ptr, false, func(p string, c any) error { return sh.visit(c, p) }); err != nil {
			return err
		}
	}
	return nil
}

// each visits the schemas of an array keyword.
func each(m map[string]any, k, ptr string, f func(string, any) error) error {
	c, ok := m[k]
	if !ok {
		return nil
	}
	a, ok := c.([]any)
	if !ok || len(a) == 0 {
		return fmt.Errorf("%s%s must be a non-empty array of schemas", at(ptr), k)
	}
	for i, e := range a {
		if err := f(fmt.Sprintf("%s/%s/%d", ptr, k, i), e); err != nil {
			return err
		}
	}
	return nil
}

// members visits the schemas of an object keyword in key order; with
// skipLists, members that are arrays (draft-07 "dependencies" lists) are not
// schemas.
func members(m map[string]any, k, ptr string, skipLists bool, f func(string, any) error) error {
	c, ok := m[k]
	if !ok {
		return nil
	}
	o, ok := c.(map[string]any)
	if !ok {
		return fmt.Errorf("%s%s must be an object", at(ptr), k)
	}
	keys := make([]string, 0, len(o))
	for key := range o {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if _, isList := o[key].([]any); isList && skipLists {
			continue
		}
		if err := f(ptr+"/"+k+"/"+escape(key), o[key]); err != nil {
			return err
		}
	}
	return nil
}

// libraryKeywords are the keywords the library reads. It reads them as
// encoding/json does, ignoring case ("$rEf" is its $ref, "ITEMS" its items),
// where this package and the drafts do not: a key that differs from one of
// them only in case is refused, or the two would see different schemas (a
// $ref loop unseen here would recurse in the library until the process
// died).
var libraryKeywords = []string{"$anchor", "$comment", "$defs", "$dynamicAnchor", "$dynamicRef", "$id", "$ref", "$schema", "$vocabulary",
	"additionalItems", "additionalProperties", "allOf", "anyOf", "const", "contains", "contentEncoding", "contentMediaType", "contentSchema",
	"default", "definitions", "dependencies", "dependentRequired", "dependentSchemas", "deprecated", "description", "else", "enum", "examples",
	"exclusiveMaximum", "exclusiveMinimum", "format", "if", "items", "maxContains", "maxItems", "maxLength", "maxProperties", "maximum",
	"minContains", "minItems", "minLength", "minProperties", "minimum", "multipleOf", "not", "oneOf", "pattern", "patternProperties",
	"prefixItems", "properties", "propertyNames", "readOnly", "required", "then", "title", "type", "unevaluatedItems",
	"unevaluatedProperties", "uniqueItems", "writeOnly", "propertyOrder"}

// checkKeywords refuses keyword values the metaschema would refuse.
func checkKeywords(m map[string]any, ptr string) error {
	for k := range m {
		for _, kw := range libraryKeywords {
			if k != kw && strings.EqualFold(k, kw) {
				return fmt.Errorf("%skeyword %q is not %s: keywords are case-sensitive", at(ptr), k, kw)
			}
		}
	}
	for _, k := range refusedWords {
		if _, ok := m[k]; ok {
			return fmt.Errorf("%s%s is not supported", at(ptr), k)
		}
	}
	if t, ok := m["type"]; ok {
		names, isList := t.([]any)
		if !isList {
			names = []any{t}
		}
		seen := map[string]bool{}
		for _, e := range names {
			s, _ := e.(string)
			if !slices.Contains(typeNames, s) {
				return fmt.Errorf("%stype %s is not a type: use one of %s", at(ptr), show(e), strings.Join(typeNames, ", "))
			}
			if seen[s] {
				return fmt.Errorf("%stype %q is named twice", at(ptr), s)
			}
			seen[s] = true
		}
	}
	for _, k := range numberWords {
		if v, ok := m[k]; ok {
			n, isNum := v.(json.Number)
			if !isNum {
				return fmt.Errorf("%s%s must be a number, not %s", at(ptr), k, kind(v))
			}
			if f, _ := n.Float64(); k == "multipleOf" && f <= 0 {
				return fmt.Errorf("%smultipleOf must be greater than 0", at(ptr))
			}
		}
	}
	for _, k := range countWords {
		if v, ok := m[k]; ok {
			n, isNum := v.(json.Number)
			f, _ := n.Float64()
			if !isNum || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
				return fmt.Errorf("%s%s must be a whole number from 0, not %s", at(ptr), k, show(v))
			}
		}
	}
	for _, k := range stringWords {
		if v, ok := m[k]; ok {
			if _, isString := v.(string); !isString {
				return fmt.Errorf("%s%s must be a string, not %s", at(ptr), k, kind(v))
			}
		}
	}
	if p, ok := m["pattern"].(string); ok {
		if _, err := regexp.Compile(p); err != nil {
			return fmt.Errorf("%spattern %q is not a regular expression hitl can use: %v", at(ptr), p, err)
		}
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for p := range pp {
			if _, err := regexp.Compile(p); err != nil {
				return fmt.Errorf("%spatternProperties %q is not a regular expression hitl can use: %v", at(ptr), p, err)
			}
		}
	}
	if r, ok := m["required"]; ok {
		list, isList := r.([]any)
		if !isList {
			return fmt.Errorf("%srequired must be an array of property names, not %s", at(ptr), kind(r))
		}
		for _, e := range list {
			if _, isString := e.(string); !isString {
				return fmt.Errorf("%srequired must be an array of property names, not hold %s", at(ptr), kind(e))
			}
		}
	}
	if e, ok := m["enum"]; ok {
		if _, isList := e.([]any); !isList {
			return fmt.Errorf("%senum must be an array of values, not %s", at(ptr), kind(e))
		}
	}
	return nil
}

// resolveRef finds the subschema a $ref names: "#" and "#/json/pointer",
// "#anchor", or either after the root's own $id. Nothing else is loaded.
func (sh *shape) resolveRef(ref string) (string, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		root, _ := sh.doc.(map[string]any)
		id, _ := root["$id"].(string)
		base, err1 := url.Parse(id)
		u, err2 := url.Parse(ref)
		if id == "" || err1 != nil || err2 != nil {
			return "", fmt.Errorf("schemas are never loaded: inline every $ref (\"#/$defs/…\")")
		}
		full := base.ResolveReference(u)
		frag = full.Fragment
		full.Fragment, base.Fragment = "", ""
		if full.String() != base.String() {
			return "", fmt.Errorf("schemas are never loaded from %s: inline every $ref (\"#/$defs/…\")", full)
		}
	} else if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if frag == "" || strings.HasPrefix(frag, "/") {
		if _, ok := sh.nodes[frag]; ok {
			return frag, nil
		}
		return "", fmt.Errorf("there is no subschema at %q", "#"+frag)
	}
	if p, ok := sh.anchors[frag]; ok {
		return p, nil
	}
	return "", fmt.Errorf("there is no $anchor %q", frag)
}

// checkLoops refuses a cycle of subschemas applied to the same value (a
// $ref back to itself, or through allOf and the like): validating against
// it would never end. It returns the subschemas in an order where each comes
// before those it applies in place.
func (sh *shape) checkLoops() ([]string, error) {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var post []string
	var dfs func(p string, path []string) error
	dfs = func(p string, path []string) error {
		switch state[p] {
		case open:
			i := slices.Index(path, p)
			loop := append(path[i:], p)
			for j := range loop {
				if loop[j] == "" {
					loop[j] = "#"
				}
			}
			return fmt.Errorf("its subschemas loop without going into the value (%s): validating would never end", strings.Join(loop, " → "))
		case done:
			return nil
		}
		state[p] = open
		for _, c := range sh.nodes[p].inPlace {
			if err := dfs(c, append(path, p)); err != nil {
				return err
			}
		}
		state[p] = done
		post = append(post, p)
		return nil
	}
	keys := make([]string, 0, len(sh.nodes))
	for p := range sh.nodes {
		keys = append(keys, p)
	}
	slices.Sort(keys)
	for _, p := range keys {
		if err := dfs(p, nil); err != nil {
			return nil, err
		}
	}
	slices.Reverse(post)
	return post, nil
}

// MaxFanOut bounds how many subschemas (counted along every path through
// $ref and the applicators) may apply to the values at one depth: $refs
// can share a subschema many times over, and the library validates every
// path (40 levels of anyOf [$ref, $ref] would be 2^40 checks of one value).
const MaxFanOut = 10000

// checkFanOut counts, depth by depth, the paths from the root to each
// subschema, and refuses a schema whose count passes MaxFanOut within
// MaxDepth steps into the value.
func (sh *shape) checkFanOut(order []string) error {
	level := map[string]int{"": 1}
	for range MaxDepth {
		// Close the counts over in-place edges, parents first.
		for _, p := range order {
			n := level[p]
			if n == 0 {
				continue
			}
			for _, c := range sh.nodes[p].inPlace {
				if level[c] += n; level[c] > MaxFanOut {
					return fmt.Errorf("more than %d subschemas apply to one value (its $refs share subschemas many times over)", MaxFanOut)
				}
			}
		}
		next := map[string]int{}
		sum := 0
		for p, n := range level {
			for _, c := range sh.nodes[p].deeper {
				next[c] += n
				if sum += n; sum > MaxFanOut {
					return fmt.Errorf("more than %d subschemas apply to the values at one depth (its $refs share subschemas many times over)", MaxFanOut)
				}
			}
		}
		if len(next) == 0 {
			return nil
		}
		level = next
	}
	return nil
}

// kind names the JSON type of a decoded value.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
