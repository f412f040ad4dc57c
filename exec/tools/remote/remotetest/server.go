// Package remotetest is a small tool server speaking the remote tool protocol
// (seed 000), for hitl's tests and as an example (testdata/toolserver runs
// it). Its tool write_file asks the user, through hitl, whether it may write:
// a user_choice message to the callback URL, then a tool_result naming the
// choice. Nothing is ever written to disk.
//
// The other tools exist to test the runtime side:
//
//	ask_twice         asks two user_choice questions in one call
//	bad_choice        sends a user_choice with its "set" fields replaced and its
//	                  "drop" fields removed; the result reports hitl's answer
//	foreign_response  sends a user_choice whose response_url is on another host
//	silent            acknowledges and never sends a tool_result
//	refuse            refuses the invocation (HTTP 500)
//	early_result      sends the tool_result before acknowledging the invocation
//	echo              returns its arguments as it received them
package remotetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/exec/tools/remote"
)

// Server is the example tool server. Serve it with net/http or httptest.
type Server struct {
	// ChoiceTimeout bounds the wait for a user's selection (default 30s);
	// then the call ends with an error tool_result.
	ChoiceTimeout time.Duration

	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu          sync.Mutex
	waiting     map[string]chan int // selections awaited, by response key
	session     map[string]bool     // group_ids whose user chose "Yes for session"
	selections  []remote.Selection
	invocations []remote.Invocation
}

// New returns a server.
func New() *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		client:  &http.Client{Timeout: 10 * time.Second},
		ctx:     ctx,
		cancel:  cancel,
		waiting: map[string]chan int{},
		session: map[string]bool{},
	}
}

// Close stops the calls in progress and waits for them.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

// Selections returns every selection received, in order.
func (s *Server) Selections() []remote.Selection {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]remote.Selection(nil), s.selections...)
}

// Invocations returns every invocation received, in order.
func (s *Server) Invocations() []remote.Invocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]remote.Invocation(nil), s.invocations...)
}

// ServeHTTP serves POST /invoke (invocations) and POST /choice/KEY
// (selections).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method != http.MethodPost:
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
	case r.URL.Path == "/invoke":
		s.invoke(w, r)
	case strings.HasPrefix(r.URL.Path, "/choice/"):
		s.selection(w, r, strings.TrimPrefix(r.URL.Path, "/choice/"))
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) invoke(w http.ResponseWriter, r *http.Request) {
	var inv remote.Invocation
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&inv); err != nil || inv.Type != "tool_call" {
		http.Error(w, "expected a tool_call", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.invocations = append(s.invocations, inv)
	s.mu.Unlock()
	c := &call{s: s, inv: inv, base: "http://" + r.Host}
	var flow func()
	switch inv.Name {
	case "write_file":
		flow = c.writeFile
	case "ask_twice":
		flow = c.askTwice
	case "bad_choice":
		flow = c.badChoice
	case "foreign_response":
		flow = c.foreignResponse
	case "silent":
		flow = func() {}
	case "refuse":
		http.Error(w, "the tool server is down for maintenance", http.StatusInternalServerError)
		return
	case "early_result":
		c.result("done before the acknowledgement")
		w.WriteHeader(http.StatusAccepted)
		return
	case "echo":
		flow = func() { c.result(string(inv.Arguments)) }
	default:
		http.Error(w, "unknown tool "+inv.Name, http.StatusNotFound)
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		flow()
	}()
	w.WriteHeader(http.StatusAccepted) // the acknowledgement
}

func (s *Server) selection(w http.ResponseWriter, r *http.Request, key string) {
	var sel remote.Selection
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&sel); err != nil {
		http.Error(w, "expected {id, selected}", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	ch, ok := s.waiting[key]
	delete(s.waiting, key)
	if ok {
		s.selections = append(s.selections, sel)
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "no choice is awaited here", http.StatusNotFound)
		return
	}
	ch <- sel.Selected
	w.WriteHeader(http.StatusNoContent)
}

// call is one invocation being served.
type call struct {
	s    *Server
	inv  remote.Invocation
	base string // this server's URL, for response_url
}

var writeChoices = []string{"Yes for session", "Yes once", "No"}

func (c *call) writeFile() {
	var args struct{ Path, Content string }
	_ = json.Unmarshal(c.inv.Arguments, &args)
	c.s.mu.Lock()
	allowed := c.s.session[c.inv.GroupID]
	c.s.mu.Unlock()
	if allowed {
		c.result(fmt.Sprintf("write of %d bytes to %s allowed (Yes for session, remembered by the tool)", len(args.Content), args.Path))
		return
	}
	sel, err := c.ask("Allow writing to the original directory?", writeChoices, 2)
	if err != nil {
		c.result(fmt.Sprintf("Error: User choice flow failed (%v). Please try again.", err))
		return
	}
	switch sel {
	case 0:
		// The tool keeps long-term decisions itself (seed 000).
		c.s.mu.Lock()
		c.s.session[c.inv.GroupID] = true
		c.s.mu.Unlock()
		fallthrough
	case 1:
		c.result(fmt.Sprintf("choice %d %q: write of %d bytes to %s allowed", sel, writeChoices[sel], len(args.Content), args.Path))
	default:
		c.result(fmt.Sprintf("choice %d %q: write to %s declined", sel, writeChoices[sel], args.Path))
	}
}

func (c *call) askTwice() {
	first, err := c.ask("First question: deploy?", []string{"yes", "no"}, 1)
	if err != nil {
		c.result("Error: " + err.Error())
		return
	}
	second, err := c.ask("Second question: which region?", []string{"eu", "us"}, 0)
	if err != nil {
		c.result("Error: " + err.Error())
		return
	}
	c.result(fmt.Sprintf("first %d, second %d", first, second))
}

// badChoice sends a user_choice broken as the arguments say and reports
// what the runtime answered.
func (c *call) badChoice() {
	var args struct {
		Set  map[string]any `json:"set"`
		Drop []string       `json:"drop"`
	}
	_ = json.Unmarshal(c.inv.Arguments, &args)
	msg := c.choiceMessage("Broken?", []string{"a", "b"}, 0, c.base+"/choice/never")
	for k, v := range args.Set {
		msg[k] = v
	}
	for _, k := range args.Drop {
		delete(msg, k)
	}
	status, body, err := c.post(msg)
	if err != nil {
		c.result("Error: " + err.Error())
		return
	}
	c.result(fmt.Sprintf("user_choice answered %d %s", status, strings.TrimSpace(body)))
}

func (c *call) foreignResponse() {
	msg := c.choiceMessage("Allow?", []string{"yes", "no"}, 1, "http://tools.example.invalid/choice/x")
	status, body, err := c.post(msg)
	if err == nil && status/100 == 2 {
		c.result("Error: the runtime accepted a foreign response_url")
		return
	}
	// The runtime ended the call; a tool_result now is refused, and
	// harmless.
	c.result(fmt.Sprintf("user_choice answered %d %s", status, strings.TrimSpace(body)))
}

// ask sends a user_choice and waits for the selection.
func (c *call) ask(promptText string, choices []string, def int) (int, error) {
	key := randomKey()
	ch := make(chan int, 1)
	c.s.mu.Lock()
	c.s.waiting[key] = ch
	c.s.mu.Unlock()
	defer func() {
		c.s.mu.Lock()
		delete(c.s.waiting, key)
		c.s.mu.Unlock()
	}()
	status, body, err := c.post(c.choiceMessage(promptText, choices, def, c.base+"/choice/"+key))
	if err != nil {
		return 0, err
	}
	if status/100 != 2 {
		return 0, fmt.Errorf("the runtime refused the user_choice: %d %s", status, strings.TrimSpace(body))
	}
	timeout := c.s.ChoiceTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	select {
	case sel := <-ch:
		if sel < 0 || sel >= len(choices) {
			return 0, fmt.Errorf("invalid selection %d", sel)
		}
		return sel, nil
	case <-time.After(timeout):
		return 0, errors.New("no selection arrived")
	case <-c.s.ctx.Done():
		return 0, c.s.ctx.Err()
	}
}

func (c *call) choiceMessage(promptText string, choices []string, def int, responseURL string) map[string]any {
	var callID any // null when the invocation had none
	if c.inv.CallID != "" {
		callID = c.inv.CallID
	}
	return map[string]any{
		"type": "user_choice", "group_id": c.inv.GroupID, "id": c.inv.ID, "call_id": callID,
		"prompt": promptText, "choices": choices, "default": def, "response_url": responseURL,
	}
}

func (c *call) result(text string) {
	_, _, _ = c.post(remote.ToolResult{Type: "tool_result", GroupID: c.inv.GroupID, ID: c.inv.ID, Text: text})
}

// post sends a message to the callback URL.
func (c *call) post(msg any) (status int, body string, err error) {
	data, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(c.s.ctx, http.MethodPost, c.inv.CallbackURL, bytes.NewReader(data))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.s.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b), nil
}

func randomKey() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
