package cmd_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// Each script gets two small web servers for the fetch toolset, on two
// origins: ${WEB_URL} and ${OTHER_URL}. WEB_URL serves /page (text), /html
// (HTML), /same (a redirect to its own /page) and /away (a redirect to
// OTHER_URL's /page); every path a request reached is logged for the
// script as /log (only GETs are served: anything else is 405).
func init() {
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "other host %s %s\n", r.Method, r.URL.Path)
		}))
		var (
			mu  sync.Mutex
			log []string
		)
		web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if r.URL.Path == "/log" {
				for _, l := range log {
					fmt.Fprintln(w, l)
				}
				mu.Unlock()
				return
			}
			log = append(log, r.Method+" "+r.URL.Path)
			mu.Unlock()
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
