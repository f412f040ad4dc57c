// Package schema compiles JSON Schemas written by models or agent authors and
// validates values against them, with the options of DESIGN §4: draft
// 2020-12 by default (draft-07 when the schema says so), formats asserted,
// nothing loaded from anywhere.
//
// Validation is github.com/google/jsonschema-go's. This package adds what a
// schema from a model needs before that library may see it (bounds on size
// and numbers, keyword shapes, $ref loops refused instead of recursing
// without end), the format assertions the library leaves out (format.go),
// and errors that say where in the value and what was expected
// (locate.go).
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a compiled schema.
type Schema struct {
	resolved *jsonschema.Resolved
	shape    *shape
}

// Compile compiles raw, a JSON Schema document.
func Compile(raw json.RawMessage) (*Schema, error) {
	doc, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("the schema is not valid JSON: %v", err)
	}
	if err := checkNumbers(doc, ""); err != nil {
		return nil, fmt.Errorf("the schema does not compile: %w", err)
	}
	if err := checkSize(doc); err != nil {
		return nil, fmt.Errorf("the schema is too large: %w", err)
	}
	sh, err := analyse(doc)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %w", err)
	}
	r, err := resolve(sh.doc)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %w", err)
	}
	return &Schema{resolved: r, shape: sh}, nil
}

// resolve hands a checked document to the library.
func resolve(doc any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("a %s where %s expects %s", te.Value, lastField(te.Field), te.Type)
		}
		return nil, err
	}
	return s.Resolve(nil)
}

func lastField(f string) string {
	if i := strings.LastIndexByte(f, '.'); i >= 0 {
		return f[i+1:]
	}
	return f
}

// Validate checks the JSON document data.
func (s *Schema) Validate(data []byte) error {
	v, err := decode(data)
	if err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if err := checkNumbers(v, ""); err != nil {
		return err
	}
	if valueDepth(v) > MaxValueDepth {
		return fmt.Errorf("the value is nested deeper than %d levels (objects and arrays)", MaxValueDepth)
	}
	if err := s.resolved.Validate(plain(v)); err != nil {
		return errors.New(s.describe(v))
	}
	if err := s.shape.checkFormats(s.shape.root(), v, ""); err != nil {
		return err
	}
	return nil
}

// MaxValueDepth bounds how deeply a value's objects and arrays nest: the
// library's error for a part 9000 levels down is built level by level
// (seconds of work and a gigabyte of garbage), and no answer or tool
// argument nests that deep.
const MaxValueDepth = 512

func valueDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, valueDepth(e))
		}
	case []any:
		for _, e := range v {
			d = max(d, valueDepth(e))
		}
	default:
		return 0
	}
	return d + 1
}

// decode reads one JSON value, numbers as json.Number (their text kept for
// the bounds check and for messages).
func decode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// plain is v with every json.Number a float64, as the library expects.
func plain(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := strconv.ParseFloat(string(v), 64) // in range: checkNumbers
		return f
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = plain(e)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = plain(e)
		}
		return a
	}
	return v
}

// MaxDepth bounds how deeply a schema's objects and arrays nest, and
// MaxNodes how many it holds: no question needs more, and a model's schema
// of 3000 levels of anyOf or 30000 properties is refused at once.
const (
	MaxDepth = 128
	MaxNodes = 4096
)

// checkSize refuses a schema document nested deeper than MaxDepth or
// holding more than MaxNodes objects and arrays.
func checkSize(doc any) error {
	nodes := 0
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		var children []any
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				children = append(children, e)
			}
		case []any:
			children = v
		default:
			return nil
		}
		if depth > MaxDepth {
			return fmt.Errorf("it is nested deeper than %d levels (objects and arrays)", MaxDepth)
		}
		if nodes++; nodes > MaxNodes {
			return fmt.Errorf("it holds more than %d objects and arrays", MaxNodes)
		}
		for _, e := range children {
			if err := walk(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(doc, 1)
}

// maxDigits bounds the length of a number's text: no answer or tool
// argument needs more, and parsing stays cheap.
const maxDigits = 10000

// checkNumbers rejects numbers a float64 cannot hold (beyond ±1.8e308),
// wherever they are in v: the library compares float64s, and an infinity
// would pass a maximum it does not meet.
func checkNumbers(v any, where string) error {
	switch v := v.(type) {
	case json.Number:
		if !numberInRange(string(v)) {
			at := ""
			if where != "" {
				at = "at " + where + ": "
			}
			return fmt.Errorf("%snumber %.40s is out of range (numbers are limited to ±1.8e308, %d digits and exponents of ±%[3]d)", at, string(v), maxDigits)
		}
	case map[string]any:
		for k, e := range v {
			if err := checkNumbers(e, where+"/"+escape(k)); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := checkNumbers(e, where+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func numberInRange(s string) bool {
	if len(s) > maxDigits {
		return false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		// An exponent this far out underflows to 0 (or is absurd).
		if e, err := strconv.Atoi(s[i+1:]); err != nil || e < -maxDigits || e > maxDigits {
			return false
		}
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// escape makes a key one JSON Pointer token.
func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
