package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"

	"github.com/hitl-dev/hitl/prompt"
)

// deskRequest is a --request read: the question to ask here, and what
// binds the answer line to it.
type deskRequest struct {
	prompt.Question
	Type    string `json:"type"`
	Consent bool   `json:"consent"`
	RunID   string `json:"run_id"`
	Cwd     string `json:"cwd"`
	Session string `json:"session"`
	Nonce   string `json:"nonce"`
}

// requestQuestion reads --request: the prompt.request object an approver
// program got on stdin (DESIGN §14), as the question to ask here. It sets
// opts.nonce to the request's nonce, for the answer line.
func requestQuestion(opts *AskOptions) (prompt.Question, error) {
	var data []byte
	var err error
	if opts.Request == "-" {
		data, err = io.ReadAll(io.LimitReader(opts.IO.In, prompt.MaxLine+1))
	} else {
		var f *os.File
		if f, err = os.Open(opts.Request); err == nil {
			data, err = io.ReadAll(io.LimitReader(f, prompt.MaxLine+1))
			f.Close()
		}
	}
	if err != nil {
		return prompt.Question{}, usagef("--request %s: %v", opts.Request, err)
	}
	var req deskRequest
	if err := json.Unmarshal(data, &req); err != nil || req.Type != "prompt.request" {
		return prompt.Question{}, usagef("--request %s: not a prompt.request object (what an approver gets on stdin)", opts.Request)
	}
	q := req.Question
	if req.Consent {
		// The person answering here grants something, as on the run's
		// terminal: the refusal is preselected (No, once of an approval;
		// no of a yes/no), never the default the request carries, and an
		// index is never taken.
		q.Consent = prompt.ConsentConfirm
	}
	q.Default = nil
	q.Header = deskHeader(req)
	opts.nonce = req.Nonce
	return q, nil
}

// deskHeader says, above the question, who asks: the run, the agent, the
// directory and the session.
func deskHeader(req deskRequest) string {
	var parts []string
	for _, p := range [][2]string{{"run", req.RunID}, {"agent", req.Agent}, {"in", req.Cwd}, {"session", req.Session}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		}
	}
	if req.Header != "" {
		parts = append(parts, req.Header)
	}
	return strings.Join(parts, " · ")
}

// printApproverLine prints the answer as an approver's answer line, with
// who gave it, bound to the question by its prompt id and the request's
// nonce (the consent rule, docs/approvals.md); nobody answering prints a
// pass (the run's next source decides).
func printApproverLine(opts *AskOptions, q prompt.Question, ans prompt.Answer, askErr error) error {
	var stop *prompt.StopError
	var unanswered *prompt.UnansweredError
	if askErr != nil && !errors.As(askErr, &stop) && !errors.As(askErr, &unanswered) {
		return askErr
	}
	line := map[string]any{"action": "pass"}
	if askErr == nil {
		line = map[string]any{"action": ans.Action, "approver": approverIdentity()}
		if len(ans.Content) > 0 {
			line["content"] = json.RawMessage(ans.Content)
		}
		if ans.Text != "" {
			line["text"] = ans.Text
		}
	}
	if q.ID != "" {
		line["prompt_id"] = q.ID
	}
	if opts.nonce != "" {
		line["nonce"] = opts.nonce
	}
	data, _ := json.Marshal(line)
	_, err := fmt.Fprintf(opts.IO.Out, "%s\n", data)
	return err
}

// approverIdentity names the person answering here: user@host.
func approverIdentity() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}
