package mcptest

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stateKey signs the request states of the multi-round tools, so a server
// started again (a resumed run's) accepts the states an earlier one gave
// and refuses any other, as a real stateless server would.
var stateKey = []byte("mcptest request state key")

// ProvisionSchema is the question provision asks after its first phase.
const ProvisionSchema = `{"type":"object","properties":{"region":{"type":"string","title":"Region","enum":["eu","us"]}},"required":["region"]}`

// counter counts the first phases of the multi-round tools.
type counter struct {
	file string
	mu   sync.Mutex
	n    map[string]int
}

// start records a first phase of tool and returns how many it has run.
func (c *counter) start(tool string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == "" {
		c.n[tool]++
		return c.n[tool]
	}
	f, err := os.OpenFile(c.file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintf(f, "%s first phase\n", tool)
		f.Close()
	}
	return c.count(tool)
}

func (c *counter) count(tool string) int {
	if c.file == "" {
		return c.n[tool]
	}
	f, err := os.Open(c.file)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() == tool+" first phase" {
			n++
		}
	}
	return n
}

// sign makes a request state of this instance of the server.
func sign(instance, payload string) string {
	body := instance + "|" + payload
	m := hmac.New(sha256.New, stateKey)
	m.Write([]byte(body))
	return body + "." + hex.EncodeToString(m.Sum(nil))
}

// verify returns the instance and payload of a state a run of this server
// signed.
func verify(state string) (instance, payload string, ok bool) {
	i := strings.LastIndexByte(state, '.')
	if i < 0 {
		return "", "", false
	}
	instance, payload, found := strings.Cut(state[:i], "|")
	return instance, payload, found && hmac.Equal([]byte(sign(instance, payload)), []byte(state))
}

func addRoundTools(s *mcp.Server, opts Options) {
	count := &counter{file: opts.CountFile, n: map[string]int{}}
	instance := rand.Text()
	// state reads a call's request state: "" for a fresh call; an error
	// for one the server does not accept.
	state := func(req *mcp.CallToolRequest) (string, error) {
		if req.Params.RequestState == "" {
			return "", nil
		}
		from, payload, ok := verify(req.Params.RequestState)
		if !ok || (opts.Forgetful && from != instance) {
			return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown or expired requestState"}
		}
		return payload, nil
	}
	elicited := func(req *mcp.CallToolRequest, key string) *mcp.ElicitResult {
		r, _ := req.Params.InputResponses[key].(*mcp.ElicitResult)
		return r
	}

	// provision does its first phase (counted), then asks for a region
	// with the phase's outcome in its request state; called again with
	// the state and the answer, it finishes without redoing the phase.
	addTool(s, opts, &mcp.Tool{
		Name:        "provision",
		Description: "Provision a machine (reserves it, then asks where to put it).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		payload, err := state(req)
		if err != nil {
			return nil, err
		}
		if payload == "" {
			n := count.start("provision")
			return &mcp.CallToolResult{
				RequestState: sign(instance, fmt.Sprintf("provision:reserved %s (first phase %d)", in.Name, n)),
				InputRequests: mcp.InputRequestMap{"region": &mcp.ElicitParams{
					Mode: "form", Message: "Where should " + in.Name + " go?", RequestedSchema: json.RawMessage(ProvisionSchema),
				}},
			}, nil
		}
		r := elicited(req, "region")
		if r == nil || r.Action != "accept" {
			return text("provisioning cancelled after: " + strings.TrimPrefix(payload, "provision:")), nil
		}
		return text(fmt.Sprintf("%s; placed in %v (first phase ran %d time(s))",
			strings.TrimPrefix(payload, "provision:"), r.Content["region"], count.count("provision"))), nil
	})

	// signin asks two questions in one round: credentials (with a secret
	// field) and a target environment.
	addTool(s, opts, &mcp.Tool{
		Name:        "signin",
		Description: "Sign in to an environment (asks credentials and the environment at once).",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		payload, err := state(req)
		if err != nil {
			return nil, err
		}
		if payload == "" {
			n := count.start("signin")
			return &mcp.CallToolResult{
				RequestState: sign(instance, fmt.Sprintf("signin:%d", n)),
				InputRequests: mcp.InputRequestMap{
					"credentials": &mcp.ElicitParams{Mode: "form", Message: "Sign in", RequestedSchema: json.RawMessage(LoginSchema)},
					"target":      &mcp.ElicitParams{Mode: "form", Message: "Which environment?", RequestedSchema: json.RawMessage(ChooseEnvSchema)},
				},
			}, nil
		}
		cred, target := elicited(req, "credentials"), elicited(req, "target")
		if cred == nil || target == nil || cred.Action != "accept" || target.Action != "accept" {
			return text("not signed in"), nil
		}
		pw, _ := cred.Content["password"].(string)
		return text(fmt.Sprintf("signed in as %v to %v with a password of %d characters (first phase ran %d time(s))",
			cred.Content["user"], target.Content["env"], len(pw), count.count("signin"))), nil
	})
}
