package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMcpQuestions asks n user_prompt questions through hitl mcp (in
// process, over pipes, as a client would over stdio), each answered by
// the answers file, and reports the time per question: against
// BenchmarkQuestions (a JSONL answer to a script agent's question in hitl
// exec), what a question costs through the MCP server. "kept" names the
// session (--session), so each call is synced to disk.
func BenchmarkMcpQuestions(b *testing.B) {
	const n = 1000
	for _, kept := range []bool{false, true} {
		name := "journal"
		if kept {
			name = "session"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			answers := filepath.Join(dir, "answers.yaml")
			if err := os.WriteFile(answers, []byte("- {match: \"Question\", content: b, repeat: true}\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				session := ""
				if kept {
					session = filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
				}
				benchMcp(b, n, answers, session, map[string]string{"XDG_STATE_HOME": dir})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e6, "ms/question")
		})
	}
}

// benchMcp serves hitl mcp over pipes and asks n questions through it.
func benchMcp(b *testing.B, n int, answers, session string, env map[string]string) {
	b.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ios := &IOStreams{
		In: c2sR, Out: s2cW, ErrOut: io.Discard,
		Getenv:    func(k string) string { return env[k] },
		LookupEnv: func(string) (string, bool) { return "", false },
	}
	opts := &McpOptions{IO: ios, Prompt: "none", Answers: answers, Unanswered: "deny", Session: session}
	done := make(chan error, 1)
	go func() { done <- mcpRun(context.Background(), opts); s2cW.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "user_prompt",
			Arguments: json.RawMessage(fmt.Sprintf(`{"message":"Question %d?","schema":{"type":"string","enum":["a","b","c"]}}`, i))})
		if err != nil || res.IsError {
			b.Fatalf("question %d: %v %v", i, err, res)
		}
	}
	cs.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
