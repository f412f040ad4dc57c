package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

// Close reaches remote tools also when a permission rule wraps them: their
// callback server is closed, so a later call fails instead of listening.
func TestCloseRemote(t *testing.T) {
	cfg := &config.Config{Path: "agent.yaml"}
	a := &config.Agent{Toolsets: []*config.Toolset{{
		Type: "remote", URL: "http://127.0.0.1:1/invoke",
		Tools: []config.RemoteTool{{Name: "write_file"}, {Name: "other"}},
	}}}
	list, _, err := Build(cfg, a, Deps{RunID: "r", Permissions: config.Permissions{Ask: []string{"write_file"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := list[0].(*gated); !ok {
		t.Fatalf("write_file is not gated: %T", list[0])
	}
	if err := Close(list); err != nil {
		t.Fatal(err)
	}
	_, err = list[1].Call(context.Background(), exec.ToolCall{ID: "c", Name: "other", Arguments: json.RawMessage(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("call after Close: %v", err)
	}
}
