package cmd_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// Each script gets two small web servers for the fetch toolset, on two
// origins: ${WEB_URL} and ${OTHER_URL}. WEB_URL serves /page (text), /html
// (HTML), /same (a redirect to its own /page) and /away (a redirect to
// OTHER_URL's /page). Every request either server gets is logged to
// $WORK/web.log as "web|other METHOD PATH" (only GETs are served: else 405).
// OTHER_URL answers "other host METHOD PATH", then " NAME=VALUE" for each
// X- header and Cookie it got (openapi's header and cookie parameters).
func init() {
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		var mu sync.Mutex
		logf := func(srv string, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			f, err := os.OpenFile(filepath.Join(env.WorkDir, "web.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				fmt.Fprintf(f, "%s %s %s\n", srv, r.Method, r.URL.Path)
				f.Close()
			}
		}
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			logf("other", r)
			var extra []string
			for k, vs := range r.Header {
				if strings.HasPrefix(k, "X-") || k == "Cookie" {
					for _, v := range vs {
						extra = append(extra, " "+k+"="+v)
					}
				}
			}
			sort.Strings(extra)
			fmt.Fprintf(w, "other host %s %s%s\n", r.Method, r.URL.Path, strings.Join(extra, ""))
		}))
		web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			logf("web", r)
			if r.Method != http.MethodGet {
				http.Error(w, "GET only", http.StatusMethodNotAllowed)
				return
			}
			switch r.URL.Path {
			case "/page":
				fmt.Fprintln(w, "hello from the web")
			case "/html":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintln(w, "<html><body><h1>Title</h1><p>Some <b>bold</b> text.</p></body></html>")
			case "/same":
				http.Redirect(w, r, "/page", http.StatusFound)
			case "/away":
				http.Redirect(w, r, other.URL+"/page", http.StatusFound)
			default:
				http.NotFound(w, r)
			}
		}))
		env.Defer(func() {
			web.Close()
			other.Close()
		})
		env.Setenv("WEB_URL", web.URL)
		env.Setenv("OTHER_URL", other.URL)
		return nil
	})
}
