package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer is a streamable HTTP MCP server written by hand, to misbehave:
// it answers initialize normally and every other request with respond.
func rawServer(t *testing.T, respond func(w http.ResponseWriter, id json.RawMessage, method string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&msg); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if msg.ID == nil {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		if msg.Method != "initialize" && msg.Method != "tools/list" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
			return
		}
		if msg.Method == "initialize" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`, msg.ID)
			return
		}
		respond(w, msg.ID, msg.Method)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A remote server whose JSON answer never ends is cut at the bound: the
// handshake fails with a clear error, and hitl stops reading.
func TestRemoteJSONBodyIsBounded(t *testing.T) {
	var sent atomic.Int64
	url := rawServer(t, func(w http.ResponseWriter, id json.RawMessage, method string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"x","description":"`, id)
		chunk := []byte(strings.Repeat("a", 64<<10))
		for sent.Load() < 8*MaxMessage {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	_, err := Start(context.Background(), Server{Name: "raw", URL: url}, Options{Handshake: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Fatalf("Start: %v", err)
	}
	if n := sent.Load(); n > 2*MaxMessage {
		t.Fatalf("the server could send %d bytes of one message bounded at %d", n, MaxMessage)
	}
}

// A server whose tool list never ends (a next page, always) is refused
// past MaxTools: the tools are not all kept.
func TestEndlessToolPagesAreBounded(t *testing.T) {
	var pages atomic.Int64
	url := rawServer(t, func(w http.ResponseWriter, id json.RawMessage, method string) {
		p := pages.Add(1)
		var tools []string
		for i := range 100 {
			tools = append(tools, fmt.Sprintf(`{"name":"t%d_%d","inputSchema":{"type":"object"}}`, p, i))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s],"nextCursor":"c%d"}}`, id, strings.Join(tools, ","), p)
	})
	_, err := Start(context.Background(), Server{Name: "raw", URL: url}, Options{Handshake: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d tools", MaxTools)) {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("%d pages", pages.Load())
	if n := pages.Load(); n > MaxTools/100+2 {
		t.Fatalf("read %d pages of 100 tools past the bound of %d tools", n, MaxTools)
	}
}
