package config

import (
	"gopkg.in/yaml.v3"
)

var structuredOutputKeys = []string{"name", "description", "schema", "strict"}

// structuredOutput reads structured_output: a name and a schema that
// compiles (as every schema hitl takes), a description, strict.
func (l *loader) structuredOutput(n *yaml.Node) *StructuredOutput {
	if !l.want(n, yaml.MappingNode, "a mapping with name and schema") {
		return nil
	}
	so := &StructuredOutput{}
	var schemaNode *yaml.Node
	l.eachKey(n, "structured_output key", structuredOutputKeys, nil, func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			so.Name = l.str(v)
		case "description":
			so.Description = l.str(v)
		case "strict":
			so.Strict = l.boolean(v)
		case "schema":
			schemaNode = v
			so.Schema = l.jsonValue(v)
		}
	})
	if so.Name == "" {
		l.errorf(n, "structured_output needs a name (the response format's name)")
	}
	if schemaNode == nil {
		l.errorf(n, "structured_output needs a schema (a JSON Schema object)")
		return so
	}
	if err := l.checks.jsonSchema(so.Schema); err != nil {
		l.errorf(schemaNode, "structured_output schema: %v", err)
	}
	return so
}
