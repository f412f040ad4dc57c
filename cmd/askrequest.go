package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"

	"github.com/hitl-dev/hitl/prompt"
)

// requestQuestion reads --request: the prompt.request object an approver
// program got on stdin (DESIGN §14), as the question to ask here.
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
	var req struct {
		prompt.Question
		Type    string `json:"type"`
		Consent bool   `json:"consent"`
	}
	if err := json.Unmarshal(data, &req); err != nil || req.Type != "prompt.request" {
		return prompt.Question{}, usagef("--request %s: not a prompt.request object (what an approver gets on stdin)", opts.Request)
	}
	q := req.Question
	if req.Consent {
		// The person answering here grants something: no default is
		// preselected, an index is never taken.
		q.Consent = prompt.ConsentApproval
		if q.Kind == prompt.KindConfirm {
			q.Consent = prompt.ConsentConfirmNo
		}
	}
	q.Default = nil
	return q, nil
}

// printApproverLine prints the answer as an approver's answer line, with
// who gave it; nobody answering prints a pass (the run's next source
// decides).
func printApproverLine(opts *AskOptions, ans prompt.Answer, askErr error) error {
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
