package cmd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkQuestions runs a script agent asking n questions answered by a
// JSONL pipe, end to end through hitl exec with the session journal on, and
// reports the time per question.
func BenchmarkQuestions(b *testing.B) {
	const n = 1000
	dir := b.TempDir()
	var agent strings.Builder
	agent.WriteString("models:\n  m:\n    provider: script\n    script:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&agent, "      - tool_calls: [{name: user_prompt, arguments: {message: \"Question %d?\", schema: {type: string, enum: [a, b, c]}}}]\n", i)
	}
	agent.WriteString("      - text: done\nagents:\n  root:\n    model: m\n    max_iterations: 2000\n    toolsets: [{type: user_prompt}]\n")
	agentFile := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(agentFile, []byte(agent.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	answers := bytes.Repeat([]byte("\"b\"\n"), n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchExec(b, agentFile, filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i)), bytes.NewReader(answers), map[string]string{"XDG_STATE_HOME": dir}, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e6, "ms/question")
}

// benchExec runs agentFile once through hitl exec with the session journal
// at session, stdin in, env as the environment (XDG_STATE_HOME included),
// and more applied to the options; the run must succeed.
func benchExec(b *testing.B, agentFile, session string, in io.Reader, env map[string]string, more func(*ExecOptions)) {
	b.Helper()
	var out bytes.Buffer
	ios := &IOStreams{
		In: in, Out: &out, ErrOut: io.Discard,
		Getenv:    func(k string) string { return env[k] },
		LookupEnv: func(string) (string, bool) { return "", false },
	}
	opts := &ExecOptions{IO: ios, AgentFile: agentFile, JSON: true, Session: session}
	opts.Unanswered = "stop"
	if more != nil {
		more(opts)
	}
	if err := execRun(context.Background(), opts); err != nil {
		b.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte(`"status":"success"`)) {
		b.Fatalf("run did not succeed: %s", out.Bytes()[max(0, out.Len()-300):])
	}
}

// BenchmarkTransferRoundTrip runs n transfer_task calls to a sub-agent that
// answers at once, against the same run with n plain tool calls (think),
// end to end through hitl exec with the session journal on: the
// difference per call is what a transfer costs (the sub-agent's model,
// tools and system prompt made, its frame journaled).
func BenchmarkTransferRoundTrip(b *testing.B) {
	const n = 200
	for _, kind := range []string{"plain", "transfer"} {
		b.Run(kind, func(b *testing.B) {
			dir := b.TempDir()
			var agent strings.Builder
			agent.WriteString("models:\n  m:\n    provider: script\n    script:\n")
			for i := 0; i < n; i++ {
				if kind == "plain" {
					fmt.Fprintf(&agent, "      - tool_calls: [{name: think, arguments: {thought: \"step %d\"}}]\n", i)
				} else {
					fmt.Fprintf(&agent, "      - tool_calls: [{name: transfer_task, arguments: {agent: helper, task: \"step %d\", expected_output: \"ok\"}}]\n", i)
				}
			}
			agent.WriteString("      - text: done\n  h:\n    provider: script\n    script:\n      - text: ok\n")
			agent.WriteString("agents:\n  root:\n    model: m\n    max_iterations: 1000\n    sub_agents: [helper]\n    toolsets: [{type: think}]\n  helper:\n    model: h\n")
			agentFile := filepath.Join(dir, "agent.yaml")
			if err := os.WriteFile(agentFile, []byte(agent.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchExec(b, agentFile, filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i)), strings.NewReader(""), map[string]string{"XDG_STATE_HOME": dir}, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e3, "µs/call")
		})
	}
}

// BenchmarkApprover answers n questions of a run through the JSONL front end,
// through an approver program, and through a sync webhook (an httptest
// server), end to end through hitl exec: the difference per question is
// what an approver costs.
func BenchmarkApprover(b *testing.B) {
	const n = 50
	dir := b.TempDir()
	var agent strings.Builder
	agent.WriteString("models:\n  m:\n    provider: script\n    script:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&agent, "      - tool_calls: [{name: user_prompt, arguments: {message: \"Question %d?\", schema: {type: string, enum: [a, b, c]}}}]\n", i)
	}
	agent.WriteString("      - text: done\nagents:\n  root:\n    model: m\n    max_iterations: 200\n    toolsets: [{type: user_prompt}]\n")
	agentFile := filepath.Join(dir, "agent.yaml")
	script := filepath.Join(dir, "approve.sh")
	if err := os.WriteFile(agentFile, []byte(agent.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat > /dev/null\necho '\"b\"'\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	raw := make([]byte, 24)
	_, _ = rand.Read(raw)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(raw)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Nonce string `json:"nonce"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		fmt.Fprintf(w, `{"content":"b","nonce":%q}`+"\n", req.Nonce)
	}))
	defer hook.Close()
	runs := 0
	for _, kind := range []string{"jsonl", "program", "webhook"} {
		b.Run(kind, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runs++
				in := strings.NewReader("")
				if kind == "jsonl" {
					in = strings.NewReader(strings.Repeat("\"b\"\n", n))
				}
				env := map[string]string{"XDG_STATE_HOME": dir, "HITL_APPROVER_SECRET": secret}
				benchExec(b, agentFile, filepath.Join(dir, fmt.Sprintf("%s%d.jsonl", kind, runs)), in, env, func(opts *ExecOptions) {
					opts.ApproverTimeout = time.Minute
					switch kind {
					case "program":
						opts.Approvers, opts.Prompt = []string{script}, "none"
					case "webhook":
						opts.Approvers, opts.Prompt = []string{hook.URL}, "none"
					}
				})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e6, "ms/question")
		})
	}
}
