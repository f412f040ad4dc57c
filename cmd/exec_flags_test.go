package cmd

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

func testIO() *IOStreams {
	return &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard,
		Getenv: func(string) string { return "" }, LookupEnv: func(string) (string, bool) { return "", false }}
}

// exec's flags, checked through runF: where the message begins, flags end.
func TestNewCmdExecFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		agent   string
		message []string
		yolo    bool
		json    bool
		wantErr string
	}{
		{name: "agent only", args: []string{"a.yaml"}, agent: "a.yaml"},
		{name: "flags before the agent", args: []string{"--yolo", "--json", "a.yaml", "go"}, agent: "a.yaml", message: []string{"go"}, yolo: true, json: true},
		{name: "flags right after the agent", args: []string{"a.yaml", "--yolo", "go"}, agent: "a.yaml", message: []string{"go"}, yolo: true},
		{name: "a flag in the message is text", args: []string{"a.yaml", "fix", "the", "--yolo", "handling"}, agent: "a.yaml", message: []string{"fix", "the", "--yolo", "handling"}},
		{name: "-- ends flags", args: []string{"a.yaml", "--", "--json", "is", "text"}, agent: "a.yaml", message: []string{"--json", "is", "text"}},
		{name: "an unknown flag after the agent", args: []string{"a.yaml", "-rf"}, wantErr: "a message whose first word starts with a dash goes after --"},
		{name: "no agent", args: []string{}, wantErr: "missing AGENT.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *ExecOptions
			c := NewCmdExec(testIO(), func(_ context.Context, o *ExecOptions) error {
				got = o
				return nil
			})
			c.SetArgs(tt.args)
			c.SetOut(&bytes.Buffer{})
			c.SetErr(&bytes.Buffer{})
			err := c.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.AgentFile != tt.agent || strings.Join(got.Message, "|") != strings.Join(tt.message, "|") || got.Yolo != tt.yolo || got.JSON != tt.json {
				t.Errorf("options: agent %q message %q yolo %v json %v", got.AgentFile, got.Message, got.Yolo, got.JSON)
			}
		})
	}
}

// resume's flags, checked through runF.
func TestNewCmdResumeFlags(t *testing.T) {
	var got *ResumeOptions
	c := NewCmdResume(testIO(), func(_ context.Context, o *ResumeOptions) error {
		got = o
		return nil
	})
	c.SetArgs([]string{"s.jsonl", "--force", "now", "--yolo", "please"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.SessionRef != "s.jsonl" || !got.Force || got.Yolo || strings.Join(got.Message, " ") != "now --yolo please" {
		t.Errorf("options: session %q force %v yolo %v message %q", got.SessionRef, got.Force, got.Yolo, got.Message)
	}
}
