package remote

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/ext"
	"github.com/hitl-dev/hitl/exec/ext/exttest"
	"github.com/hitl-dev/hitl/exec/model/internal/provider"
)

// model is a remote model of base, run by the stand-in at path.
func model(base, path string) *Model {
	return New("google", provider.Config{Model: &config.Model{Name: "g", Provider: "google", Model: "m"}, BaseURL: base, HTTPClient: http.DefaultClient}, path, nil)
}

// tunnelRequest is the bytes of a tunnel request to url.
func tunnelRequest(id uint32, url string) string {
	return string(exttest.Frame(ext.THTTP, id, `{"method":"GET","url":"`+url+`","header":{}}`))
}

// hitl-ext reaches only the model's base URL: one that asks for a request
// anywhere else (the key in its query) is killed, and nothing is sent.
func TestTunnelReachesOnlyTheBaseURL(t *testing.T) {
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer other.Close()
	for _, url := range []string{other.URL + "/steal?key=k", "http://localhost:1/x", "http://x@127.0.0.1:2/", "file:///etc/passwd", "//x/y"} {
		path := exttest.Fake(t, exttest.Hello, "head -c 1 >/dev/null; cat "+filepathOf(t, tunnelRequest(1, url))+"; exec cat >/dev/null")
		m := model("http://127.0.0.1:1/", path)
		_, err := m.Turn(context.Background(), exec.Request{Messages: []exec.Message{{Role: exec.RoleUser, Text: "hi"}}})
		m.Close()
		if err == nil || !strings.Contains(err.Error(), "outside the model's base URL http://127.0.0.1:1/, and was killed") {
			t.Errorf("%s: err = %v", url, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
}

// A hitl-ext asking for more requests at once than the SDK ever does is
// killed, not served (each would hold a goroutine and a body).
func TestTunnelRequestsAreBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	var flood string
	for id := uint32(1); id <= MaxRequests+1; id++ {
		flood += tunnelRequest(id, srv.URL+"/x")
	}
	path := exttest.Fake(t, exttest.Hello, "head -c 1 >/dev/null; sleep 0.3; cat "+filepathOf(t, flood)+"; exec cat >/dev/null")
	m := model(srv.URL+"/", path)
	defer m.Close()
	_, err := m.Turn(context.Background(), exec.Request{Messages: []exec.Message{{Role: exec.RoleUser, Text: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "it asked for more than 4 requests at once") {
		t.Fatalf("err = %v", err)
	}
}

// What hitl's client owns (Host, lengths, hop-by-hop) is never taken from
// hitl-ext's header map, whatever its case: a second Host or length would
// go out verbatim.
func TestTunnelHeaderIsCanonical(t *testing.T) {
	h := header(map[string][]string{
		"host": {"evil.example"}, "content-length": {"999"}, "transfer-encoding": {"chunked"}, "Connection": {"close"},
		"x-goog-api-key": {"k"}, "content-type": {"application/json"}, "X-Two": {"a", "b"},
	})
	want := http.Header{"X-Goog-Api-Key": {"k"}, "Content-Type": {"application/json"}, "X-Two": {"a", "b"}}
	if len(h) != len(want) {
		t.Fatalf("header %v, want %v", h, want)
	}
	for k, v := range want {
		if strings.Join(h[k], ",") != strings.Join(v, ",") {
			t.Errorf("%s: %v, want %v", k, h[k], v)
		}
	}
}

func filepathOf(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "frame.bin")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hitl-ext killed while a request of its turn is being read: the turn
// fails saying so, the request ends with it, and nothing writes to a
// companion that is gone (a panic, before).
func TestCompanionKilledMidRequest(t *testing.T) {
	stalled := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stalled:
		}
	}))
	defer srv.Close()
	defer close(stalled)
	path := exttest.Fake(t, exttest.Hello, "head -c 1 >/dev/null; cat "+filepathOf(t, tunnelRequest(1, srv.URL+"/v1beta/x"))+"; sleep 0.5; kill -9 $$")
	m := model(srv.URL+"/", path)
	start := time.Now()
	_, err := m.Turn(context.Background(), exec.Request{Messages: []exec.Message{{Role: exec.RoleUser, Text: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "google: hitl-ext ended") || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("err = %v", err)
	}
	m.Close()
	time.Sleep(200 * time.Millisecond) // the request's goroutine ends after the turn
	m.mu.Lock()
	n := len(m.inflight)
	m.mu.Unlock()
	if n != 0 {
		t.Errorf("%d requests still in flight after the turn", n)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
}

// A stopped hitl-ext fails its turn after Silence, never hangs it.
func TestStoppedCompanionFailsTheTurn(t *testing.T) {
	defer func(d time.Duration) { Silence = d }(Silence)
	Silence = time.Second
	path := exttest.Fake(t, exttest.Hello, "head -c 1 >/dev/null; kill -STOP $$")
	m := model("http://127.0.0.1:1/", path)
	defer m.Close()
	_, err := m.Turn(context.Background(), exec.Request{Messages: []exec.Message{{Role: exec.RoleUser, Text: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "it sent nothing for 1s while a call waited (stopped or wedged), and was killed") {
		t.Fatalf("err = %v", err)
	}
}

// An error keeps hitl-ext's text whole (what wrapped it there, such as a
// turn's retries) and the type hitl's callers look for.
func TestErrorKeepsTextAndType(t *testing.T) {
	m := model("http://127.0.0.1:1/", "")
	for _, e := range []*ext.Error{
		{Message: "google: stream cut: unexpected EOF (after 3 retries)", Kind: "stream", Provider: "google", Detail: "unexpected EOF", Cut: true},
		{Message: "google: stream cut: unexpected EOF", Kind: "stream", Provider: "google", Detail: "unexpected EOF", Cut: true},
	} {
		err := m.errorOf(context.Background(), e)
		if err.Error() != e.Message {
			t.Errorf("text %q, want %q", err, e.Message)
		}
		var se *provider.StreamError
		if !errors.As(err, &se) || !se.Cut {
			t.Errorf("%q: not a cut StreamError", err)
		}
	}
}
