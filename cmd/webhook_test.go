package cmd_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func init() {
	scriptCmds["webhook"] = cmdWebhook
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		env.Values[webhookKey{}] = &webhookHolder{}
		return nil
	})
}

type webhookHolder struct{ srv *webhookServer }

// cmdWebhook runs an approval webhook for the script (an httptest server
// that checks each request's Standard Webhooks signature and refuses a bad
// one with 401):
//
//	webhook sync|async|gone|wrong-nonce|pending|bare
//	                                      start it; $WEBHOOK_URL is its URL and
//	                                      $HITL_APPROVER_SECRET its secret
//	webhook log FILE                      write what it saw, a line per request
//
// sync answers "once" at once (as approver bob, echoing the nonce); async
// answers 202 with a Location, then "once" when polled; gone answers 202,
// then 410 Gone; wrong-nonce answers with another nonce; pending answers
// 202 to every request, and writes the file webhook-asked when the question
// comes; bare answers with the bare value "once" (no nonce).
func cmdWebhook(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: webhook sync|async|gone|wrong-nonce|pending|bare | webhook log FILE")
	}
	if args[0] == "log" {
		holder, _ := ts.Value(webhookKey{}).(*webhookHolder)
		if holder == nil || holder.srv == nil || len(args) != 2 {
			ts.Fatalf("webhook log FILE: no server")
		}
		h := holder.srv
		h.mu.Lock()
		defer h.mu.Unlock()
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(h.log, "\n")+"\n"), 0o644))
		return
	}
	raw := make([]byte, 24)
	_, _ = rand.Read(raw)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(raw)
	wh, err := standardwebhooks.NewWebhook(secret)
	ts.Check(err)
	h := &webhookServer{mode: args[0], wh: wh, asked: ts.MkAbs("webhook-asked")}
	srv := httptest.NewServer(h)
	ts.Defer(srv.Close)
	ts.Setenv("WEBHOOK_URL", srv.URL+"/approve")
	ts.Setenv("HITL_APPROVER_SECRET", secret)
	holder, _ := ts.Value(webhookKey{}).(*webhookHolder)
	if holder == nil {
		ts.Fatalf("webhook: Setup did not give the script its holder")
	}
	holder.srv = h
}

type webhookKey struct{}

type webhookServer struct {
	mode  string
	wh    *standardwebhooks.Webhook
	asked string // the file pending writes when the question comes
	mu    sync.Mutex
	log   []string
}

func (h *webhookServer) note(format string, args ...any) {
	h.mu.Lock()
	h.log = append(h.log, fmt.Sprintf(format, args...))
	h.mu.Unlock()
}

func (h *webhookServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := h.wh.Verify(body, r.Header); err != nil {
		h.note("%s %s refused: %v", r.Method, r.URL.Path, err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	answer := func(nonce string) {
		fmt.Fprintf(w, `{"action":"accept","content":"once","approver":"bob@example.com","nonce":%q}`+"\n", nonce)
	}
	if r.Method == http.MethodGet {
		nonce := strings.TrimPrefix(r.URL.Path, "/poll/")
		h.note("GET poll verified")
		if h.mode == "pending" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if h.mode == "gone" {
			w.WriteHeader(http.StatusGone)
			return
		}
		answer(nonce)
		return
	}
	var req struct {
		PromptID string `json:"prompt_id"`
		Nonce    string `json:"nonce"`
		RunID    string `json:"run_id"`
		Consent  bool   `json:"consent"`
	}
	_ = json.Unmarshal(body, &req)
	h.note("POST %s verified consent=%v run_id=%v nonce=%v", req.PromptID, req.Consent, req.RunID != "", req.Nonce != "")
	switch h.mode {
	case "sync":
		answer(req.Nonce)
	case "wrong-nonce":
		answer("not-" + req.Nonce)
	case "pending":
		_ = os.WriteFile(h.asked, nil, 0o644)
		w.Header().Set("Location", "/poll/"+req.Nonce)
		w.WriteHeader(http.StatusAccepted)
	case "bare":
		fmt.Fprintln(w, `"once"`)
	default:
		w.Header().Set("Location", "/poll/"+req.Nonce)
		w.WriteHeader(http.StatusAccepted)
	}
}
