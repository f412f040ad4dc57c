// Package toon gives the model a tool's JSON result as TOON (Token-Oriented
// Object Notation), as cagent's toolset toon: does: a result whose text is a
// JSON object is re-encoded with github.com/alpkeskin/gotoon (the library
// and version cagent uses, default options); any other text stays as it is.
//
// hitl keeps the JSON where the TOON text would not say the same thing, or
// would cost more than the result itself: a text over MaxInput; a number
// float64 cannot hold (gotoon prints 12345678901234567890 as
// 12345678901234567000), or beyond 10^±MaxMagnitude (TOON writes every
// digit); an array inside an array holding objects or arrays (gotoon
// v0.1.1 leaves those out); a TOON text longer than MaxGrowth times the
// JSON plus Slack (deep nesting indents every line).
// These are checked before anything is encoded, so a hostile result costs
// no more memory than its own decoding: at most some 60 times its length
// (encoding/json's tree of it, and gotoon's copy), so about 16 MiB at
// MaxInput. MCP results are cut at 100,000 characters (then not JSON) and
// shell output at 30,000: MaxInput binds only fetch, api and remote tools.
package toon

import (
	"encoding/json"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/alpkeskin/gotoon"
)

const (
	// MaxInput is the longest result text re-encoded.
	MaxInput = 256 << 10
	// MaxGrowth and Slack bound the TOON text: at most MaxGrowth times
	// the JSON's length, plus Slack bytes.
	MaxGrowth = 4
	Slack     = 64 << 10
	// MaxMagnitude bounds the numbers re-encoded: TOON writes every
	// digit, so 1e300 would take 301 bytes; beyond 10^±21, the JSON stays.
	MaxMagnitude = 21
)

// Matcher says which tools' results are re-encoded: cagent's toon: value,
// comma-separated regular expressions matched (unanchored) against the tool's
// name.
type Matcher []*regexp.Regexp

// Compile reads a toon: value. An empty value matches no tool; each part
// between commas is trimmed and compiled (an empty part matches every
// tool, as in cagent). The error names the part that is not a regular
// expression.
func Compile(value string) (Matcher, error) {
	if value == "" {
		return nil, nil
	}
	var m Matcher
	for _, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		re, err := regexp.Compile(part)
		if err != nil {
			return nil, &PatternError{Pattern: part, Err: err}
		}
		m = append(m, re)
	}
	return m, nil
}

// PatternError is a part of a toon: value that does not compile.
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return strconv.Quote(e.Pattern) + " is not a valid regular expression: " + strings.TrimPrefix(e.Err.Error(), "error parsing regexp: ")
}

func (e *PatternError) Unwrap() error { return e.Err }

// Matches reports whether the tool name's results are re-encoded.
func (m Matcher) Matches(name string) bool {
	for _, re := range m {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// Convert returns text as TOON when it is a JSON object that TOON says
// exactly and within bounds (see the package comment); ok false: keep text.
func Convert(text string) (out string, ok bool) {
	if len(text) > MaxInput {
		return "", false
	}
	if t := strings.TrimLeft(text, " \t\r\n"); !strings.HasPrefix(t, "{") {
		return "", false // not an object: no need to decode it
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return "", false
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", false // more after the object: not one JSON value
	}
	if !numbersFit(text) {
		return "", false
	}
	if !numbers(obj) {
		return "", false
	}
	var m meter
	m.object(obj, 0)
	limit := int64(MaxGrowth)*int64(len(text)) + Slack
	if m.lossy || m.bytes > limit {
		return "", false
	}
	out, err := gotoon.Encode(obj)
	if err != nil {
		return "", false
	}
	return out, true
}

// numbersFit says whether each number written in text (one JSON value) is
// one a float64 holds, as cagent's decoder needs, even one a later
// duplicate key replaces, which the decoder above, keeping numbers as
// written, never sees.
func numbersFit(text string) bool {
	for i := 0; i < len(text); {
		switch c := text[i]; {
		case c == '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
			i++
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(text) && strings.IndexByte("0123456789+-.eE", text[j]) >= 0 {
				j++
			}
			if _, err := strconv.ParseFloat(text[i:j], 64); err != nil {
				return false
			}
			i = j
		default:
			i++
		}
	}
	return true
}

// numbers replaces each json.Number of v (in place) by the float64 cagent
// decodes it to, and reports whether TOON prints each as the same number.
func numbers(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if n, ok := x.(json.Number); ok {
				f, ok := number(n)
				if !ok {
					return false
				}
				v[k] = f
			} else if !numbers(x) {
				return false
			}
		}
	case []any:
		for i, x := range v {
			if n, ok := x.(json.Number); ok {
				f, ok := number(n)
				if !ok {
					return false
				}
				v[i] = f
			} else if !numbers(x) {
				return false
			}
		}
	}
	return true
}

// number is n as a float64, when TOON prints that float64 as the value n
// writes.
func number(n json.Number) (float64, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false // out of range: cagent's decoding fails too
	}
	if f != 0 && math.Abs(math.Log10(math.Abs(f))) > MaxMagnitude {
		return 0, false // TOON spells it out: 1e300 is 301 digits
	}
	printed := formatted(f)
	if printed == string(n) {
		return f, true
	}
	a, ok1 := decimal(string(n))
	b, ok2 := decimal(printed)
	return f, ok1 && ok2 && a == b
}

// formatted is how TOON prints the number f.
func formatted(f float64) string {
	s, err := gotoon.Encode(f)
	if err != nil {
		return ""
	}
	return s
}

// dec is a decimal number's value: its significant digits (no leading or
// trailing zeros; "" for zero) times ten to the exp.
type dec struct {
	neg    bool
	digits string
	exp    int64
}

// decimal reads a JSON number (or TOON's printing of one) exactly, in time
// linear in its length, whatever its exponent.
func decimal(s string) (dec, bool) {
	var d dec
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		d.neg, s = true, rest
	}
	mant, e := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, e = s[:i], s[i+1:]
	}
	if e != "" {
		x, err := strconv.ParseInt(e, 10, 64)
		if err != nil || x > 1<<40 || x < -(1<<40) {
			return dec{}, false
		}
		d.exp = x
	}
	whole, frac, _ := strings.Cut(mant, ".")
	if whole == "" && frac == "" {
		return dec{}, false
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return dec{}, false
		}
	}
	digits := strings.TrimLeft(whole+frac, "0")
	d.exp -= int64(len(frac))
	trimmed := strings.TrimRight(digits, "0")
	d.exp += int64(len(digits) - len(trimmed))
	d.digits = trimmed
	if d.digits == "" {
		return dec{}, true // zero, whatever its sign
	}
	return d, true
}

// meter bounds from above the length of gotoon's encoding of a value,
// following its layout (which strategy each array takes, how deep each line
// is indented) without building it, and finds what gotoon would leave out.
type meter struct {
	bytes int64
	lossy bool
}

// line counts one line of content bytes at depth (two spaces a level, and
// its newline).
func (m *meter) line(depth int, content int64) {
	m.bytes += 2*int64(depth) + content + 1
}

func (m *meter) object(obj map[string]any, depth int) {
	for k, v := range obj {
		m.pair(k, v, depth)
	}
}

func (m *meter) pair(k string, v any, depth int) {
	switch v := v.(type) {
	case []any:
		m.array(k, v, depth)
	case map[string]any:
		m.line(depth, keyLen(k)+1)
		m.object(v, depth+1)
	default:
		m.line(depth, keyLen(k)+2+primLen(v))
	}
}

// header is "key[N]{fields}:".
func header(key string, n int, fields []string) int64 {
	l := int64(len(strconv.Itoa(n))) + 3 // [N]:
	if key != "" {
		l += keyLen(key)
	}
	if len(fields) > 0 {
		l += 2 + int64(len(fields)-1)
		for _, f := range fields {
			l += keyLen(f)
		}
	}
	return l
}

// inline is a primitive array on one line: "key[N]: a,b,c".
func inline(key string, a []any) int64 {
	l := header(key, len(a), nil)
	if len(a) > 0 {
		l += 1 + int64(len(a)-1)
		for _, v := range a {
			l += primLen(v)
		}
	}
	return l
}

func (m *meter) array(key string, a []any, depth int) {
	switch {
	case len(a) == 0 || allPrimitive(a):
		m.line(depth, inline(key, a))
	case allArraysOfPrimitives(a):
		m.line(depth, header(key, len(a), nil))
		for _, item := range a {
			m.line(depth+1, 2+inline("", item.([]any)))
		}
	case allObjects(a):
		if fields := tabular(a); fields != nil {
			m.line(depth, header(key, len(a), fields))
			m.rows(a, fields, depth+1)
			return
		}
		m.mixed(key, a, depth)
	default:
		m.mixed(key, a, depth)
	}
}

func (m *meter) rows(a []any, fields []string, depth int) {
	for _, item := range a {
		obj := item.(map[string]any)
		l := int64(len(fields) - 1)
		for _, f := range fields {
			l += primLen(obj[f])
		}
		m.line(depth, l)
	}
}

// mixed is an array as a list of "- item" lines.
func (m *meter) mixed(key string, a []any, depth int) {
	m.line(depth, header(key, len(a), nil))
	m.items(a, depth+1)
}

func (m *meter) items(a []any, depth int) {
	for _, item := range a {
		switch item := item.(type) {
		case []any:
			if !allPrimitive(item) {
				m.lossy = true // gotoon writes nothing for it
				continue
			}
			m.line(depth, 2+inline("", item))
		case map[string]any:
			m.listObject(item, depth)
		default:
			m.line(depth, 2+primLen(item))
		}
	}
}

// listObject is an object as a list item: its first key (in sorted order)
// on the "- " line, the others below it.
func (m *meter) listObject(obj map[string]any, depth int) {
	if len(obj) == 0 {
		m.line(depth, 1)
		return
	}
	keys := sortedKeys(obj)
	first := keys[0]
	switch v := obj[first].(type) {
	case []any:
		switch {
		case allPrimitive(v):
			m.line(depth, 2+inline(first, v))
		case allObjects(v):
			if fields := tabular(v); fields != nil {
				m.line(depth, 2+header(first, len(v), fields))
				m.rows(v, fields, depth+1)
			} else {
				m.line(depth, 2+header(first, len(v), nil))
				for _, item := range v {
					m.listObject(item.(map[string]any), depth+1)
				}
			}
		default:
			m.line(depth, 2+header(first, len(v), nil))
			m.items(v, depth+1)
		}
	case map[string]any:
		m.line(depth, 2+keyLen(first)+1)
		m.object(v, depth+2)
	default:
		m.line(depth, 2+keyLen(first)+2+primLen(v))
	}
	for _, k := range keys[1:] {
		m.pair(k, obj[k], depth+1)
	}
}

// tabular returns the fields of an array of objects gotoon writes as a
// table (each object with the first one's keys, all primitive), or nil.
func tabular(a []any) []string {
	first := a[0].(map[string]any)
	if len(first) == 0 {
		return nil
	}
	fields := sortedKeys(first)
	for _, item := range a {
		obj := item.(map[string]any)
		if len(obj) != len(fields) {
			return nil
		}
		for _, f := range fields {
			v, ok := obj[f]
			if !ok || !primitive(v) {
				return nil
			}
		}
	}
	return fields
}

func primitive(v any) bool {
	switch v.(type) {
	case nil, bool, float64, string:
		return true
	}
	return false
}

func allPrimitive(a []any) bool {
	for _, v := range a {
		if !primitive(v) {
			return false
		}
	}
	return true
}

func allArraysOfPrimitives(a []any) bool {
	for _, v := range a {
		inner, ok := v.([]any)
		if !ok || !allPrimitive(inner) {
			return false
		}
	}
	return true
}

func allObjects(a []any) bool {
	for _, v := range a {
		if _, ok := v.(map[string]any); !ok {
			return false
		}
	}
	return true
}

func sortedKeys(obj map[string]any) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// keyLen and primLen bound a key's and a value's encoded length: a string
// quoted with its escapes (gotoon quotes fewer), a number as TOON prints it.
func keyLen(k string) int64 { return quotedLen(k) }

func primLen(v any) int64 {
	switch v := v.(type) {
	case nil:
		return 4
	case bool:
		return 5
	case float64:
		return int64(len(formatted(v)))
	case string:
		return quotedLen(v)
	}
	return 4
}

func quotedLen(s string) int64 {
	n := int64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\\', '\n', '\r', '\t':
			n++
		}
	}
	return n
}
