package ext

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hitl-dev/hitl/exec/sandbox"
)

// OneShotTimeout bounds one request of ReadOpenAPI or RenderHTML (a
// parser that loops on what a document holds fails its call, never hangs
// the run).
var OneShotTimeout = time.Minute

// ReadOpenAPI has a hitl-ext (found with Find, started in sb; nil: none)
// read data, the OpenAPI document at spec.
func ReadOpenAPI(ctx context.Context, sb *sandbox.Sandbox, getenv func(string) string, spec string, data []byte) (OpenAPIResult, error) {
	var res OpenAPIResult
	err := oneShot(ctx, sb, getenv, "the openapi toolset "+spec, "read the OpenAPI document "+spec, TOpenAPI, OpenAPIDoc{Spec: spec, Data: data}, &res)
	return res, err
}

// RenderHTML has a hitl-ext render page as Markdown (markdown) or text.
func RenderHTML(ctx context.Context, sb *sandbox.Sandbox, getenv func(string) string, page string, markdown bool) (string, error) {
	var res HTMLResult
	err := oneShot(ctx, sb, getenv, "rendering an HTML page (fetch)", "render the page", THTML, HTMLPage{Page: page, Markdown: markdown}, &res)
	return res.Text, err
}

// oneShot starts a hitl-ext, sends it one request and reads its answer
// into out.
func oneShot(ctx context.Context, sb *sandbox.Sandbox, getenv func(string) string, need, what string, t byte, req, out any) error {
	path, err := Find(need, getenv)
	if err != nil {
		return err
	}
	if sb == nil {
		if sb, err = sandbox.New(sandbox.Off, ""); err != nil {
			return err
		}
	}
	c, err := Start(sb, path, func(Frame) {})
	if err != nil {
		return err
	}
	defer c.Close()
	callCtx, cancel := context.WithTimeoutCause(ctx, OneShotTimeout, fmt.Errorf("%s did not %s within %s", Program, what, OneShotTimeout))
	defer cancel()
	f, err := c.Call(callCtx, t, req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(f.Data, out); err != nil {
		return fmt.Errorf("%s's answer: %w", Program, err)
	}
	return nil
}
