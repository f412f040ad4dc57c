package mcptest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Package is the import path of the stdio server command.
const Package = "github.com/hitl-dev/hitl/exec/tools/mcp/mcptest/cmd/mcptest-server"

// Build builds the stdio server command into t.TempDir() and returns its
// path. Run it with -legacy for protocol 2025-11-25.
func Build(t testing.TB) string {
	t.Helper()
	path, err := BuildInto(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// BuildInto builds the stdio server command into dir (for TestMain).
func BuildInto(dir string) (string, error) {
	path := filepath.Join(dir, "mcptest-server")
	out, err := exec.Command("go", "build", "-o", path, Package).CombinedOutput()
	if err != nil {
		return "", &buildError{out: string(out), err: err}
	}
	return path, nil
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string {
	return "building " + Package + ": " + e.err.Error() + "\n" + e.out
}

// HTTPServer is the test server over streamable HTTP (and SSE).
type HTTPServer struct {
	// URL is the streamable HTTP endpoint; SSE is the SSE endpoint.
	URL, SSE string
	// Stateless is a stateless streamable HTTP endpoint: the only one
	// that speaks protocol 2026-07-28 (input-required results and request
	// states), and one where the server cannot send requests of its own.
	Stateless string
	srv       *httptest.Server
	crashed   atomic.Bool
	once      sync.Once
	cancel    context.CancelFunc
}

// HTTP serves the test server over streamable HTTP at the returned URL,
// until the test ends.
func HTTP(t testing.TB) string { return NewHTTP(t, Options{}).URL }

// NewHTTP serves the test server over streamable HTTP (/mcp, and stateless
// at /stateless) and SSE (/sse)
// until the test ends. Its crash tool makes the listener drop every
// connection and refuse new requests.
func NewHTTP(t testing.TB, opts Options) *HTTPServer {
	h := Serve(opts)
	t.Cleanup(h.Close)
	return h
}

// Serve serves the test server over streamable HTTP (/mcp) and SSE (/sse)
// until Close (for callers without a testing.TB, such as testscript's
// Setup).
func Serve(opts Options) *HTTPServer {
	h := &HTTPServer{}
	opts.Crash = h.Crash
	server := NewServer(opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	mux.Handle("/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil))
	mux.Handle("/stateless", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true}))
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.crashed.Load() {
			dropConnection(w)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	// Requests (and the tool calls they carry) end with the server.
	base, cancel := context.WithCancel(context.Background())
	h.srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	h.cancel = cancel
	h.srv.Start()
	h.URL, h.SSE, h.Stateless = h.srv.URL+"/mcp", h.srv.URL+"/sse", h.srv.URL+"/stateless"
	return h
}

// Close stops the server, ending the requests in flight.
func (h *HTTPServer) Close() {
	h.cancel()
	h.srv.CloseClientConnections()
	h.srv.Close()
}

// Crash drops every connection; later requests are refused.
func (h *HTTPServer) Crash() {
	h.once.Do(func() {
		h.crashed.Store(true)
		go h.srv.CloseClientConnections()
	})
}

func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}
