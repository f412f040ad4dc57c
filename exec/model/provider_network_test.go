package model_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/exec/model/cassette"
)

// A base_url server that redirects to another host must not get the key
// sent there: Go's client drops Authorization on such a redirect, not
// x-api-key, and a recording cassette's client follows redirects too.
func TestRedirectKeepsKeyAtBaseURL(t *testing.T) {
	for _, f := range formats {
		for _, record := range []bool{false, true} {
			name := f.provider
			if record {
				name += "/record"
			}
			t.Run(name, func(t *testing.T) {
				var mu sync.Mutex
				var leaked []string
				other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					for k, vs := range r.Header {
						for _, v := range vs {
							if strings.Contains(v, "sk-secret") {
								leaked = append(leaked, k)
							}
						}
					}
					mu.Unlock()
					http.Error(w, "no", http.StatusTeapot)
				}))
				defer other.Close()
				// another host: localhost instead of 127.0.0.1
				target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
				base := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
				}))
				defer base.Close()
				o := fastOpts(env(map[string]string{f.keyVar: "sk-secret"}))
				if record {
					c, err := cassette.Record(t.TempDir()+"/c.yaml", nil)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					o.Cassette = c
				}
				m, err := model.New(&config.Model{Name: "m", Provider: f.provider, Model: "x", BaseURL: base.URL}, o)
				if err != nil {
					t.Fatal(err)
				}
				_, err = m.Turn(context.Background(), request())
				if err == nil {
					t.Fatal("a redirected turn succeeded")
				}
				mu.Lock()
				defer mu.Unlock()
				if len(leaked) > 0 {
					t.Errorf("the key reached the redirect target in %v (err %v)", leaked, err)
				}
			})
		}
	}
}

// A server that stops sending mid-stream (or before its headers) is
// abandoned after the idle timeout, retried within the bounds, and the turn
// fails with an error that says so: never a hang.
func TestStalledStream(t *testing.T) {
	for _, f := range formats {
		for _, before := range []bool{false, true} {
			name := f.provider + "/mid-stream"
			if before {
				name = f.provider + "/before-headers"
			}
			t.Run(name, func(t *testing.T) {
				stop := make(chan struct{})
				var hits atomic.Int32
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					hits.Add(1)
					if !before {
						w.Header().Set("Content-Type", "text/event-stream")
						w.WriteHeader(http.StatusOK)
						if f.provider == "anthropic" {
							fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n")
						} else {
							fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n")
						}
						w.(http.Flusher).Flush()
					}
					select {
					case <-stop:
					case <-r.Context().Done():
					}
				}))
				defer srv.Close()
				defer close(stop)
				o := fastOpts(env(map[string]string{f.keyVar: "k"}))
				o.MaxRetries = 1
				o.HTTPClient = &http.Client{Transport: model.WithIdleTimeout(http.DefaultTransport.(*http.Transport).Clone(), 100*time.Millisecond)}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				start := time.Now()
				_, err := newModel(t, f.provider, srv.URL, o).Turn(ctx, request())
				var stalled *model.StalledError
				if !errors.As(err, &stalled) || ctx.Err() != nil {
					t.Fatalf("err = %v (after %s), want a StalledError", err, time.Since(start))
				}
				if n := hits.Load(); n < 2 || n > 4 {
					t.Errorf("%d requests, want the bounded retries", n)
				}
			})
		}
	}
}

// A provider's error message reaches stderr: its control characters are
// escaped and its length bounded.
func TestAPIErrorMessageShown(t *testing.T) {
	for _, f := range formats {
		t.Run(f.provider, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":"\u001b]0;pwned\u0007\u001b[2J bad key %s"}}`, strings.Repeat("x", 50000))
			}))
			defer srv.Close()
			_, err := newModel(t, f.provider, srv.URL, fastOpts(env(map[string]string{f.keyVar: "k"}))).Turn(context.Background(), request())
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\x1b\x07") || len(msg) > 3000 || !strings.Contains(msg, `\x1b[2J bad key`) {
				t.Errorf("error shown as %q… (%d bytes)", msg[:min(len(msg), 200)], len(msg))
			}
		})
	}
}

// A server that echoes the key in its error (a proxy at base_url, a
// debugging gateway) never has it printed: the key is hidden in the
// error's text, whose type is still found.
func TestAPIErrorHidesTheKey(t *testing.T) {
	const key = "sk-secret-0123456789abcdef"
	for _, f := range formats {
		t.Run(f.provider, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","code":400,"status":"INVALID_ARGUMENT","message":"bad request with key %s"}}`, key)
			}))
			defer srv.Close()
			_, err := newModel(t, f.provider, srv.URL, fastOpts(env(map[string]string{f.keyVar: key}))).Turn(context.Background(), request())
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); strings.Contains(msg, key) || !strings.Contains(msg, "bad request with key [the API key]") {
				t.Errorf("error shown as %q", msg)
			}
			var ae *model.APIError
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
				t.Errorf("not an APIError of status 400: %#v", err)
			}
		})
	}
}
