// Package schema compiles JSON Schemas written by models or agent authors and
// validates values against them, with the options of DESIGN §4: draft
// 2020-12 by default, formats asserted, nothing loaded from anywhere.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/hitl-dev/hitl/internal/jsonschema"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled schema.
type Schema struct {
	s *jsonschema.Schema
}

var printer = message.NewPrinter(language.English)

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas are never loaded from %s: inline every $ref", url)
}

// Compile compiles raw, a JSON Schema document.
func Compile(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the schema is not valid JSON: %v", err)
	}
	if err := checkNumbers(doc, ""); err != nil {
		return nil, fmt.Errorf("the schema does not compile: %w", err)
	}
	if err := checkSize(doc); err != nil {
		return nil, fmt.Errorf("the schema is too large: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	const loc = "mem://schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("the schema does not compile: %v", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %s", clean(err.Error()))
	}
	return &Schema{s: s}, nil
}

// Validate checks the JSON document data.
func (s *Schema) Validate(data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	return s.ValidateValue(v)
}

// ValidateValue checks a decoded value (as jsonschema.UnmarshalJSON gives).
func (s *Schema) ValidateValue(v any) error {
	if err := checkNumbers(v, ""); err != nil {
		return err
	}
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errors.New(describe(ve))
	}
	return err
}

// MaxDepth bounds how deeply a schema's objects and arrays nest, and
// MaxNodes how many it holds: compiling a schema (its metaschema check, the
// compiler's queue) grows far faster than either (3000 levels of anyOf, or
// 30000 properties, from a model took minutes of CPU), and no question
// needs more.
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

// maxExponent bounds the decimal exponent of a number: the validator does
// exact arithmetic (big.Rat), which fails on 1E10000000 (and then crashes
// inside the library) and grows slow long before that. No answer or tool
// argument needs more.
const maxExponent = 10000

// checkNumbers rejects numbers out of the range the validator can handle
// exactly, wherever they are in v (as jsonschema.UnmarshalJSON decodes it).
func checkNumbers(v any, where string) error {
	switch v := v.(type) {
	case json.Number:
		if !numberInRange(string(v)) {
			at := ""
			if where != "" {
				at = "at " + where + ": "
			}
			return fmt.Errorf("%snumber %.40s is out of range (exponents are limited to ±%d)", at, string(v), maxExponent)
		}
	case map[string]any:
		for k, e := range v {
			if err := checkNumbers(e, where+"/"+k); err != nil {
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

// numberInRange says whether a JSON number has at most maxExponent digits
// and an exponent within ±maxExponent, and parses exactly.
func numberInRange(s string) bool {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil { // beyond an int: far out of range
			return false
		}
		mant, exp = s[:i], e
	}
	if exp < -maxExponent || exp > maxExponent || len(mant) > maxExponent {
		return false
	}
	_, ok := new(big.Rat).SetString(s)
	return ok
}

// describe flattens a validation error into one line naming each failing
// place: "at /port: minimum: got 0, want 1".
func describe(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			where := "/" + strings.Join(e.InstanceLocation, "/")
			msg := e.ErrorKind.LocalizedString(printer)
			if where == "/" {
				leaves = append(leaves, msg)
			} else {
				leaves = append(leaves, "at "+where+": "+msg)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(leaves, "; ")
}

// clean drops the mem:// location the compiler prints.
func clean(s string) string {
	s = strings.ReplaceAll(s, "mem://schema.json#", "#")
	return strings.ReplaceAll(s, "mem://schema.json", "schema")
}
