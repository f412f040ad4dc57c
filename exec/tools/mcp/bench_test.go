package mcp

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	hexec "github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/exec/tools/mcp/mcptest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCall compares one MCP tool call through hitl's Tool.Call (argument
// decoding, secret substitution, the timeout, result joining and masking)
// with the same call made directly on an SDK ClientSession, on the same
// server.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	args := json.RawMessage(`{"text":"hello $HITL_SECRET_1"}`)
	for _, tr := range []string{"stdio", "streamable"} {
		var s Server
		var direct func() sdk.Transport
		switch tr {
		case "stdio":
			s = Server{Name: "bench", Command: serverBin}
			direct = func() sdk.Transport { return &sdk.CommandTransport{Command: exec.Command(serverBin)} }
		case "streamable":
			h := mcptest.NewHTTP(b, mcptest.Options{})
			s = Server{Name: "bench", URL: h.URL}
			direct = func() sdk.Transport { return &sdk.StreamableClientTransport{Endpoint: h.URL} }
		}
		b.Run(tr+"/hitl", func(b *testing.B) {
			secrets := &secretsStub{}
			// The server runs in the sandbox the machine has, as in a run.
			sb, err := sandbox.New(sandbox.Auto, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("sandbox: %s", sb.Mechanism())
			c, err := Start(ctx, s, Options{Secrets: secrets, Sandbox: sb})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			var echo hexec.Tool
			for _, t := range c.Tools() {
				if t.Spec().Name == "echo" {
					echo = t
				}
			}
			b.ResetTimer()
			for b.Loop() {
				res, err := echo.Call(ctx, hexec.ToolCall{ID: "c", Name: "echo", Arguments: args})
				if err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
		b.Run(tr+"/sdk", func(b *testing.B) {
			client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := client.Connect(ctx, direct(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.ResetTimer()
			for b.Loop() {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello world"}})
				if err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
	}
}

type secretsStub struct{}

func (secretsStub) Expand(s string) string { return s }
func (secretsStub) Mask(s string) string   { return s }
