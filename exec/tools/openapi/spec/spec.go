// Package spec reads an OpenAPI document (kin-openapi) into what the
// openapi toolset needs of it. It runs in hitl-ext (package ext), so that
// hitl does not link the parser; external references are never followed
// (the document is all there is).
package spec

import (
	"fmt"
	"sort"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/hitl-dev/hitl/exec/ext"
)

// Parse reads data, the document at spec.
func Parse(spec string, data []byte) ext.OpenAPIResult {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return ext.OpenAPIResult{Error: fmt.Sprintf("the OpenAPI document %s: %v", spec, err)}
	}
	var res ext.OpenAPIResult
	for _, s := range doc.Servers {
		if s != nil {
			res.Servers = append(res.Servers, s.URL)
		}
	}
	if doc.Paths == nil {
		return res
	}
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, p := range paths {
		ops := doc.Paths.Value(p).Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			res.Operations = append(res.Operations, operation(p, m, ops[m]))
		}
	}
	return res
}

func operation(path, method string, op *openapi3.Operation) ext.Operation {
	o := ext.Operation{Path: path, Method: method, OperationID: op.OperationID, Summary: op.Summary, Description: op.Description}
	for _, ref := range op.Parameters {
		p := ref.Value
		if p == nil {
			continue
		}
		o.Parameters = append(o.Parameters, ext.Parameter{Name: p.Name, In: p.In, Description: p.Description, Required: p.Required, Schema: property(p.Schema)})
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		if c := op.RequestBody.Value.Content["application/json"]; c != nil && c.Schema != nil && c.Schema.Value != nil {
			s := c.Schema.Value
			o.Body = map[string]map[string]any{}
			for name, ref := range s.Properties {
				o.Body[name] = property(ref)
			}
			o.BodyRequired = append(o.BodyRequired, s.Required...)
		}
	}
	return o
}

// property is a parameter's or body field's schema as the tool's
// parameters give it (cagent's: its type, description and enum).
func property(ref *openapi3.SchemaRef) map[string]any {
	if ref == nil || ref.Value == nil {
		return map[string]any{"type": "string"}
	}
	s := ref.Value
	typ := "string"
	if s.Type != nil && len(s.Type.Slice()) > 0 {
		typ = s.Type.Slice()[0]
	}
	prop := map[string]any{"type": typ}
	if typ == "array" {
		prop["items"] = map[string]any{}
	}
	if s.Description != "" {
		prop["description"] = s.Description
	}
	if len(s.Enum) > 0 {
		prop["enum"] = s.Enum
	}
	return prop
}
