package model_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/internal/fakellm"
)

// instantServer answers every request at once with the same pre-rendered
// stream: a short text and one tool call, as a typical agent turn.
func instantServer(f fakellm.Format) *httptest.Server { return instantServerConn(f, nil) }

func instantServerConn(f fakellm.Format, connState func(net.Conn, http.ConnState)) *httptest.Server {
	rep := fakellm.Reply{Text: []string{"Let me ", "check."}, Calls: []fakellm.Call{{ID: "c1", Name: "shell", Args: []string{`{"cmd":`, `"git status"}`}}}, InTokens: 100, OutTokens: 20}
	body := strings.Join(fakellm.Events(f, rep), "")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	srv.Config.ConnState = connState
	srv.Start()
	return srv
}

// BenchmarkTurn is the per-turn cost of a provider (request building, HTTP on
// a kept-alive connection, SSE decoding, assembling the turn) against an
// instant local server, with a 10-message conversation and 5 tools.
func BenchmarkTurn(b *testing.B) {
	for _, f := range formats {
		b.Run(f.provider, func(b *testing.B) {
			srv := instantServer(f.format)
			defer srv.Close()
			m, err := model.New(&config.Model{Name: "m", Provider: f.provider, Model: "test-model", BaseURL: srv.URL},
				model.Options{Getenv: env(map[string]string{f.keyVar: "k"})})
			if err != nil {
				b.Fatal(err)
			}
			req := request()
			for i := 0; i < 4; i++ {
				req.Tools = append(req.Tools, exec.ToolSpec{Name: fmt.Sprintf("tool%d", i), Description: "d", Parameters: shellTool.Parameters})
			}
			for i := 0; i < 3; i++ {
				req.Messages = append(req.Messages,
					exec.Message{Role: exec.RoleAssistant, Text: "x", ToolCalls: []exec.ToolCall{{ID: fmt.Sprint("c", i), Name: "shell", Arguments: []byte(`{"cmd":"ls"}`)}}},
					exec.Message{Role: exec.RoleTool, ToolCallID: fmt.Sprint("c", i), ToolName: "shell", Text: strings.Repeat("output ", 50)},
					exec.Message{Role: exec.RoleUser, Text: "go on"})
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				t, err := m.Turn(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if len(t.Message.ToolCalls) != 1 {
					b.Fatal("bad turn")
				}
			}
		})
	}
}

// Turns share one kept-alive connection.
func TestKeepAlive(t *testing.T) {
	for _, f := range formats {
		var conns atomic.Int32
		srv := instantServerConn(f.format, func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		})
		m := newModel(t, f.provider, srv.URL, model.Options{Getenv: env(map[string]string{f.keyVar: "k"})})
		for i := 0; i < 5; i++ {
			if _, err := m.Turn(context.Background(), request()); err != nil {
				t.Fatal(err)
			}
		}
		srv.Close()
		if n := conns.Load(); n != 1 {
			t.Errorf("%s: %d connections for 5 turns", f.provider, n)
		}
	}
}
