package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// describe says where v breaks the schema and what was expected, in one
// line: "at /port: minimum: got 0, want 1; missing property 'name'". The
// library says only which subschema failed first; describe goes down the
// value itself, part by part, to the deepest parts that fail on their own.
func (s *Schema) describe(v any) string {
	l := &locator{sh: s.shape, resolved: map[string]*jsonschema.Resolved{"": s.resolved}, budget: maxLocateChecks}
	var out []string
	for _, f := range l.locate(s.shape.root(), v, plain(v), "", 0) {
		if f.path == "" {
			out = append(out, f.msg)
		} else {
			out = append(out, "at "+f.path+": "+f.msg)
		}
	}
	if len(out) == 0 { // cannot happen: the whole value failed
		return "the value does not fit the schema"
	}
	return strings.Join(out, "; ")
}

// Going down a value to the place it fails validates each part again:
// maxLocateDepth and maxLocateChecks bound that work (a value 500 levels
// deep would otherwise be validated 500 times over), and maxFailures the
// places named; past them the error names the place reached.
const (
	maxLocateDepth  = 64
	maxLocateChecks = 2000
	maxFailures     = 10
)

type locator struct {
	sh       *shape
	resolved map[string]*jsonschema.Resolved // by subschema; nil when it cannot stand alone
	budget   int
}

type failure struct{ path, msg string }

// locate returns the deepest places under path where v fails n, each with
// what it breaks; none when v fits n. pv is v as the library takes it.
func (l *locator) locate(n *node, v, pv any, path string, depth int) []failure {
	err := l.check(n, pv)
	if err == nil {
		return nil
	}
	if depth >= maxLocateDepth || l.budget <= 0 {
		return []failure{{path, l.message(n, v, err)}}
	}
	var out []failure
	add := func(fs []failure) {
		for _, f := range fs {
			if len(out) < maxFailures {
				out = append(out, f)
			}
		}
	}
	for _, m := range l.sh.applied(n) {
		switch v := v.(type) {
		case map[string]any:
			pm, _ := pv.(map[string]any)
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				for _, c := range l.sh.forProperty(m, k) {
					c = l.sh.follow(c)
					if c.m == nil && strings.HasSuffix(c.ptr, "/additionalProperties") {
						continue // worded at the object: which properties are extra
					}
					if l.standsAlone(c) {
						add(l.locate(c, v[k], pm[k], path+"/"+escape(k), depth+1))
					}
				}
			}
		case []any:
			pa, _ := pv.([]any)
			for i, e := range v {
				if c := l.sh.follow(l.sh.forItem(m, i)); c != nil && l.standsAlone(c) {
					add(l.locate(c, e, pa[i], fmt.Sprintf("%s/%d", path, i), depth+1))
				}
			}
		}
		for _, msg := range l.sh.ownFailures(m, v) {
			add([]failure{{path, msg}})
		}
	}
	if len(out) == 0 {
		return []failure{{path, l.message(n, v, err)}}
	}
	return out
}

// ownFailures are what v breaks of m's keywords on the object or array
// itself, beside what its parts break.
func (sh *shape) ownFailures(m *node, v any) []string {
	if m.m == nil {
		return nil
	}
	var out []string
	count := func(k string, got int, tooFew bool) {
		if w, ok := m.m[k].(json.Number); ok {
			if want, err := w.Int64(); err == nil && (tooFew && int64(got) < want || !tooFew && int64(got) > want) {
				out = append(out, fmt.Sprintf("%s: got %d, want %d", k, got, want))
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		if msg := render(sh, m, "required", m.m["required"], v); msg != "" {
			out = append(out, msg)
		}
		if b, ok := m.m["additionalProperties"].(bool); ok && !b {
			if msg := render(sh, m, "additionalProperties", false, v); msg != "" {
				out = append(out, msg)
			}
		}
		count("minProperties", len(v), true)
		count("maxProperties", len(v), false)
	case []any:
		count("minItems", len(v), true)
		count("maxItems", len(v), false)
	}
	return out
}

// check validates v against n alone; an error also when n cannot stand
// alone (it refers to subschemas outside $defs), so that locate stops above.
func (l *locator) check(n *node, v any) error {
	r, ok := l.resolved[n.ptr]
	if !ok {
		r = l.standalone(n)
		l.resolved[n.ptr] = r
	}
	if r == nil {
		return errors.New("cannot stand alone")
	}
	l.budget--
	return r.Validate(v)
}

func (l *locator) standsAlone(n *node) bool {
	if _, ok := l.resolved[n.ptr]; !ok {
		l.resolved[n.ptr] = l.standalone(n)
	}
	return l.resolved[n.ptr] != nil
}

// standalone compiles n as a root of its own, with the root's $defs, when
// every $ref it reaches lands in those $defs (where it lands the same).
func (l *locator) standalone(n *node) *jsonschema.Resolved {
	if n.m == nil {
		b, _ := json.Marshal(l.sh.isTrue(n))
		var s jsonschema.Schema
		if json.Unmarshal(b, &s) != nil {
			return nil
		}
		r, _ := s.Resolve(nil)
		return r
	}
	seen := map[string]bool{}
	var reach func(p string) bool
	reach = func(p string) bool {
		if seen[p] {
			return true
		}
		seen[p] = true
		c := l.sh.nodes[p]
		if c.dynRef != "" {
			return false
		}
		if c.ref != "" {
			t := c.inPlace[len(c.inPlace)-1]
			if !strings.HasPrefix(t, "/$defs/") && !strings.HasPrefix(t, "/definitions/") {
				return false
			}
		}
		for _, e := range append(slices.Clone(c.inPlace), c.deeper...) {
			if !reach(e) {
				return false
			}
		}
		return true
	}
	if !reach(n.ptr) {
		return nil
	}
	doc := make(map[string]any, len(n.m)+3)
	for k, e := range n.m {
		doc[k] = e
	}
	if root, ok := l.sh.doc.(map[string]any); ok {
		for _, k := range []string{"$schema", "$id", "$defs", "definitions"} {
			if e, ok := root[k]; ok {
				doc[k] = e
			}
		}
	}
	r, err := resolve(doc)
	if err != nil {
		return nil
	}
	return r
}

func (sh *shape) isTrue(n *node) bool {
	b, _ := valueAtPtr(sh.doc, n.ptr).(bool)
	return b
}

// follow goes from a subschema that is only a $ref (with annotations) to
// the one it names: a recursive "$ref": "#" then stands alone as the root.
func (sh *shape) follow(n *node) *node {
	for range len(sh.nodes) {
		if n == nil || n.m == nil || n.ref == "" {
			return n
		}
		for k := range n.m {
			switch k {
			case "$ref", "title", "description", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly":
			default:
				return n
			}
		}
		n = sh.nodes[n.inPlace[len(n.inPlace)-1]]
	}
	return n
}

// applied is n and the subschemas always applied with it: its $ref and
// allOf, followed on.
func (sh *shape) applied(n *node) []*node {
	out := []*node{n}
	for i := 0; i < len(out); i++ {
		m := out[i]
		if m.m == nil {
			continue
		}
		var next []string
		if m.ref != "" {
			next = append(next, m.inPlace[len(m.inPlace)-1])
		}
		if all, ok := m.m["allOf"].([]any); ok {
			for j := range all {
				next = append(next, fmt.Sprintf("%s/allOf/%d", m.ptr, j))
			}
		}
		for _, p := range next {
			if c := sh.nodes[p]; c != nil && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// forProperty is what n applies to its property k.
func (sh *shape) forProperty(n *node, k string) []*node {
	if n.m == nil {
		return nil
	}
	var out []*node
	if props, ok := n.m["properties"].(map[string]any); ok {
		if _, ok := props[k]; ok {
			out = append(out, sh.nodes[n.ptr+"/properties/"+escape(k)])
		}
	}
	matched := false
	if pp, ok := n.m["patternProperties"].(map[string]any); ok {
		for re := range pp {
			if r, err := regexp.Compile(re); err == nil && r.MatchString(k) {
				out = append(out, sh.nodes[n.ptr+"/patternProperties/"+escape(re)])
				matched = true
			}
		}
	}
	if len(out) == 0 && !matched {
		if _, ok := n.m["additionalProperties"]; ok {
			out = append(out, sh.nodes[n.ptr+"/additionalProperties"])
		}
	}
	return out
}

// forItem is what n applies to item i of an array.
func (sh *shape) forItem(n *node, i int) *node {
	if n.m == nil {
		return nil
	}
	for _, k := range []string{"prefixItems", "items"} {
		if a, ok := n.m[k].([]any); ok {
			if i < len(a) {
				return sh.nodes[fmt.Sprintf("%s/%s/%d", n.ptr, k, i)]
			}
			if k == "items" {
				return sh.nodes[n.ptr+"/additionalItems"]
			}
			if _, ok := n.m["items"].(map[string]any); ok {
				return sh.nodes[n.ptr+"/items"]
			}
			return nil
		}
	}
	if _, ok := n.m["items"]; ok {
		return sh.nodes[n.ptr+"/items"]
	}
	return nil
}

// message says what v breaks in n, from the keyword the library names.
func (l *locator) message(n *node, v any, err error) string {
	inner := err
	for u := errors.Unwrap(inner); u != nil; u = errors.Unwrap(inner) {
		inner = u
	}
	text, _, _ := strings.Cut(inner.Error(), "\n")
	keyword, _, _ := strings.Cut(text, ":")
	if strings.HasPrefix(text, "unexpected additional properties") {
		keyword = "additionalProperties"
	}
	if n == nil {
		return text
	}
	for _, m := range l.sh.applied(n) {
		if m.m == nil {
			if !l.sh.isTrue(m) {
				return "no value is allowed here"
			}
			continue
		}
		if want, ok := m.m[keyword]; ok {
			if s := render(l.sh, m, keyword, want, v); s != "" {
				return s
			}
		}
	}
	return text
}

// render words one failed keyword; "" when the value does not break it
// (another subschema with the same keyword did).
func render(sh *shape, m *node, keyword string, want, v any) string {
	switch keyword {
	case "type":
		got := jsonType(v)
		names, _ := want.([]any)
		if names == nil {
			names = []any{want}
		}
		var w []string
		for _, e := range names {
			s, _ := e.(string)
			if s == got || s == "number" && got == "integer" {
				return ""
			}
			w = append(w, s)
		}
		return fmt.Sprintf("got %s, want %s", got, strings.Join(w, " or "))
	case "enum":
		list, _ := want.([]any)
		var w []string
		for _, e := range list {
			w = append(w, show(e))
		}
		return "value must be one of " + strings.Join(w, ", ")
	case "const":
		return "value must be " + show(want)
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		return fmt.Sprintf("%s: got %s, want %s", keyword, show(v), show(want))
	case "multipleOf":
		return fmt.Sprintf("%s is not a multiple of %s", show(v), show(want))
	case "minLength", "maxLength":
		s, _ := v.(string)
		return fmt.Sprintf("%s: got %d, want %s", keyword, utf8.RuneCountInString(s), show(want))
	case "pattern":
		return fmt.Sprintf("%s does not match pattern %s", show(v), show(want))
	case "minItems", "maxItems":
		a, _ := v.([]any)
		return fmt.Sprintf("%s: got %d, want %s", keyword, len(a), show(want))
	case "minProperties", "maxProperties":
		o, _ := v.(map[string]any)
		return fmt.Sprintf("%s: got %d, want %s", keyword, len(o), show(want))
	case "uniqueItems":
		return "items must be unique"
	case "anyOf":
		list, _ := want.([]any)
		return fmt.Sprintf("anyOf: the value fits none of its %d schemas", len(list))
	case "oneOf":
		list, _ := want.([]any)
		return fmt.Sprintf("oneOf: the value must fit exactly one of its %d schemas", len(list))
	case "not":
		return "not: the value must not fit the schema under not"
	case "contains", "minContains", "maxContains":
		return keyword + ": too few or too many items fit the schema under contains"
	case "dependentRequired":
		return "dependentRequired: a property that needs others is there without them"
	case "required":
		o, _ := v.(map[string]any)
		list, _ := want.([]any)
		var missing []string
		for _, e := range list {
			if s, _ := e.(string); o != nil {
				if _, ok := o[s]; !ok {
					missing = append(missing, show(s))
				}
			}
		}
		switch len(missing) {
		case 0:
			return ""
		case 1:
			return "missing property " + missing[0]
		}
		return "missing properties " + strings.Join(missing, ", ")
	case "additionalProperties":
		o, _ := v.(map[string]any)
		var extra []string
		for k := range o {
			if len(sh.forProperty(m, k)) == 1 && strings.HasSuffix(sh.forProperty(m, k)[0].ptr, "/additionalProperties") {
				extra = append(extra, show(k))
			}
		}
		if len(extra) == 0 {
			return ""
		}
		slices.Sort(extra)
		return "additional properties " + strings.Join(extra, ", ") + " not allowed"
	}
	return ""
}

// show writes a value for a message: a string quoted in single quotes
// (Go escapes, so no control character reaches a terminal), anything else
// as JSON. Never shortened: a caller hiding a secret replaces the whole
// quoted value.
func show(v any) string {
	if s, ok := v.(string); ok {
		q := strconv.Quote(s)
		q = strings.ReplaceAll(q, `\"`, `"`)
		q = strings.ReplaceAll(q, `'`, `\'`)
		return "'" + q[1:len(q)-1] + "'"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func jsonType(v any) string {
	switch v := v.(type) {
	case json.Number:
		if _, err := v.Int64(); err == nil || !strings.ContainsAny(string(v), ".eE") {
			return "integer"
		}
		if f, err := v.Float64(); err == nil && f == float64(int64(f)) {
			return "integer"
		}
		return "number"
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func valueAtPtr(v any, ptr string) any {
	if ptr == "" {
		return v
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			var i int
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}
