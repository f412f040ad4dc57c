package ext

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hitl-dev/hitl/exec/sandbox"
)

// OpenAPITimeout bounds the reading of one document (a parser that loops
// on what a document holds fails the run, never hangs it).
var OpenAPITimeout = time.Minute

// ReadOpenAPI has a hitl-ext (found with Find, started in sb; nil: none)
// read data, the OpenAPI document at spec.
func ReadOpenAPI(ctx context.Context, sb *sandbox.Sandbox, getenv func(string) string, spec string, data []byte) (OpenAPIResult, error) {
	path, err := Find("the openapi toolset "+spec, getenv)
	if err != nil {
		return OpenAPIResult{}, err
	}
	if sb == nil {
		if sb, err = sandbox.New(sandbox.Off, ""); err != nil {
			return OpenAPIResult{}, err
		}
	}
	c, err := Start(sb, path, func(Frame) {})
	if err != nil {
		return OpenAPIResult{}, err
	}
	defer c.Close()
	readCtx, cancel := context.WithTimeoutCause(ctx, OpenAPITimeout, fmt.Errorf("%s did not read the OpenAPI document %s within %s", Program, spec, OpenAPITimeout))
	defer cancel()
	f, err := c.Call(readCtx, TOpenAPI, OpenAPIDoc{Spec: spec, Data: data})
	if err != nil {
		return OpenAPIResult{}, err
	}
	var res OpenAPIResult
	if err := json.Unmarshal(f.Data, &res); err != nil {
		return OpenAPIResult{}, fmt.Errorf("%s's reading of %s: %w", Program, spec, err)
	}
	return res, nil
}
