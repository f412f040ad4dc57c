// Package schema compiles JSON Schemas written by models or agent authors and
// validates values against them, with the options of DESIGN §4: draft
// 2020-12 by default, formats asserted, nothing loaded from anywhere.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
