package model_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
)

// routing: the last user message goes to the route whose examples match
// it best; no match stays on the model itself.
func TestRouting(t *testing.T) {
	cfg := scriptModel("default", "from default", "default again")
	cfg.Routing = []config.Route{
		{Model: scriptModel("coder", "from coder"), Examples: []string{"write some Go code", "fix this bug in the function"}},
		{Model: scriptModel("writer", "from writer"), Examples: []string{"write a poem about the sea", "draft an essay"}},
	}
	m, err := model.New(cfg, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ msg, want string }{
		{"please fix the bug in my function", "from coder"},
		{"a poem about mountains", "from writer"},
		{"what is the weather", "from default"},
		{"", "default again"},
	} {
		req := exec.Request{Messages: []exec.Message{{Role: exec.RoleUser, Text: "earlier: code"}, {Role: exec.RoleAssistant, Text: "ok"}, {Role: exec.RoleUser, Text: c.msg}}}
		if c.msg == "" {
			req.Messages = nil
		}
		tr, err := m.Turn(context.Background(), req)
		if err != nil || tr.Message.Text != c.want {
			t.Errorf("%q: %+v %v, want %q", c.msg, tr.Message.Text, err, c.want)
		}
	}
}

// English analysis: case, possessives, stop words and word forms do not
// keep an example from matching.
func TestEnglishTerms(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"Fixing the BUGS in John's functions", "fix bug john function"},
		{"Deploys to production", "deploy production"},
	} {
		if got, want := strings.Join(model.EnglishTerms(c.a), " "), strings.Join(model.EnglishTerms(c.b), " "); got != want {
			t.Errorf("%q: %q, want the terms of %q: %q", c.a, got, c.b, want)
		}
	}
}
