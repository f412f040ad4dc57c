package model_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

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
