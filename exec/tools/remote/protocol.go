package remote

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// The messages of the remote tool protocol (seed 000), as hitl speaks it.

// Invocation is the tool_call hitl POSTs to the tool server's url.
type Invocation struct {
	Type    string `json:"type"` // "tool_call"
	GroupID string `json:"group_id"`
	// ID is the model's tool call id.
	ID string `json:"id"`
	// CallID identifies this invocation (random, one per call hitl makes):
	// callbacks for the invocation echo it, so a late message meant for an
	// earlier call with the same model id is refused.
	CallID      string          `json:"call_id"`
	Name        string          `json:"name"`
	Arguments   json.RawMessage `json:"arguments"`
	CallbackURL string          `json:"callback_url"`
}

// ToolResult is the message that completes a call.
type ToolResult struct {
	Type    string `json:"type"` // "tool_result"
	GroupID string `json:"group_id"`
	ID      string `json:"id"`
	CallID  string `json:"call_id,omitempty"`
	Text    string `json:"text"`
}

// UserChoice is a tool's request that the user pick one of Choices.
type UserChoice struct {
	Type        string   `json:"type"` // "user_choice"
	GroupID     string   `json:"group_id"`
	ID          string   `json:"id"`
	CallID      *string  `json:"call_id"`
	Prompt      string   `json:"prompt"`
	Choices     []string `json:"choices"`
	Default     int      `json:"default"`
	ResponseURL string   `json:"response_url"`
}

// Selection is what hitl POSTs to a user_choice's response_url.
type Selection struct {
	ID       string `json:"id"`
	Selected int    `json:"selected"`
}

// callback is a message POSTed to the callback URL, decoded loosely so that
// missing required fields can be told apart from zero values.
type callback struct {
	Type        string          `json:"type"`
	GroupID     *string         `json:"group_id"`
	ID          *string         `json:"id"`
	CallID      *string         `json:"call_id"`
	Text        *string         `json:"text"`
	Prompt      *string         `json:"prompt"`
	Choices     []string        `json:"choices"`
	Default     json.RawMessage `json:"default"`
	ResponseURL *string         `json:"response_url"`
}

// ruleError is a callback that breaks a rule of the protocol; Status is the
// HTTP status it gets and Rule the rule it breaks, as the seed words it.
type ruleError struct {
	Status int
	Msg    string
	Rule   string
}

func (e *ruleError) Error() string {
	if e.Rule == "" {
		return e.Msg
	}
	return e.Msg + " (" + e.Rule + ")"
}

// checkUserChoice checks the fields of a user_choice that do not depend on
// the pending call (seed 000's MUST rules).
func checkUserChoice(c *callback) (UserChoice, *ruleError) {
	bad := func(msg, rule string) (UserChoice, *ruleError) {
		return UserChoice{}, &ruleError{Status: 422, Msg: "user_choice: " + msg, Rule: rule}
	}
	if c.Prompt == nil || strings.TrimSpace(*c.Prompt) == "" {
		return bad("prompt is missing or empty", "prompt is required: a human-readable prompt describing what the user is being asked")
	}
	if len(c.Choices) == 0 {
		return bad("choices is missing or empty", "choices MUST contain at least one element")
	}
	for i, label := range c.Choices {
		if strings.TrimSpace(label) == "" {
			return bad(fmt.Sprintf("choice %d has an empty label", i), "choice labels MUST be human-readable")
		}
	}
	if len(c.Default) == 0 || string(c.Default) == "null" {
		return bad("default is missing", "default is required: the index used when the user dismisses the prompt")
	}
	var def float64
	if err := json.Unmarshal(c.Default, &def); err != nil || def != float64(int(def)) || def < 0 || int(def) >= len(c.Choices) {
		return bad(fmt.Sprintf("default %s is not a valid index into choices (0..%d)", c.Default, len(c.Choices)-1), "default MUST be a valid index")
	}
	if c.ResponseURL == nil || *c.ResponseURL == "" {
		return bad("response_url is missing", "response_url is required: where the runtime MUST POST the user's selection")
	}
	u, err := url.Parse(*c.ResponseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad(fmt.Sprintf("response_url %q is not an absolute http(s) URL", *c.ResponseURL), "response_url MUST point to an endpoint the tool controls")
	}
	return UserChoice{
		Type: "user_choice", GroupID: *c.GroupID, ID: *c.ID, CallID: c.CallID,
		Prompt: *c.Prompt, Choices: c.Choices, Default: int(def), ResponseURL: *c.ResponseURL,
	}, nil
}

// responseAllowed reports whether hitl may POST a selection to u: a loopback
// host, the host of the tool server's url, or a host in allow_response_hosts
// (a host, or host:port to allow one port only).
func responseAllowed(u *url.URL, toolURL *url.URL, allow []string) bool {
	host := strings.ToLower(u.Hostname())
	if isLoopback(host) || host == strings.ToLower(toolURL.Hostname()) {
		return true
	}
	for _, a := range allow {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == host || a == strings.ToLower(u.Host) || (u.Port() == "" && a == host+":"+defaultPort(u.Scheme)) {
			return true
		}
	}
	return false
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// shownURL is u for people and the model: no credentials, no query.
func shownURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment, c.User = "", "", nil
	return c.String()
}
