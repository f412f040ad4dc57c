package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/permissions"
	"github.com/hitl-dev/hitl/prompt"
)

// actingTool is a tool whose calls act unless their "read" argument is true.
type actingTool struct {
	name, server string
	ran          int
}

func (a *actingTool) Spec() exec.ToolSpec { return exec.ToolSpec{Name: a.name} }

func (a *actingTool) Call(context.Context, exec.ToolCall) (exec.Result, error) {
	a.ran++
	return exec.Result{Text: "ran"}, nil
}

func (a *actingTool) Approval(_ context.Context, call exec.ToolCall) (exec.Approval, bool, error) {
	var args map[string]any
	_ = json.Unmarshal(call.Arguments, &args)
	ap := exec.Approval{Args: args, Server: a.server, Show: "the change", SessionKey: "k:" + a.name}
	if args["secret"] == true { // as an MCP tool says of a call with a secret placeholder
		ap.Secret = true // the key stays: the gate must not use it
	}
	if h, ok := args["hidden"].(string); ok { // as the filesystem tools say of a deny_read path
		ap.Hidden = h
	}
	return ap, args["read"] != true, nil
}

// scriptedAsker answers approvals with the given option ids in order, then
// nobody.
type scriptedAsker struct {
	ids   []string
	asked []prompt.Question
}

func (s *scriptedAsker) Ask(_ context.Context, q prompt.Question) (prompt.Answer, error) {
	s.asked = append(s.asked, q)
	if len(s.ids) == 0 {
		return prompt.Answer{Action: prompt.Cancel, Source: prompt.SourcePolicy}, nil
	}
	id := s.ids[0]
	s.ids = s.ids[1:]
	return prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"` + id + `"`), Source: prompt.SourceJSONL}, nil
}

func TestGateActingTools(t *testing.T) {
	type call struct {
		args    string
		answers []string
		ran     bool
		asked   bool
	}
	tests := []struct {
		name               string
		tool               string
		server             string
		allow, ask, deny   []string
		yolo               bool
		calls              []call
		wantSessionOptions bool
	}{
		{name: "a read runs without asking", tool: "write_file", calls: []call{{args: `{"read":true}`, ran: true}}},
		{name: "an act asks, and runs once approved", tool: "write_file", calls: []call{{args: `{"path":"a"}`, answers: []string{"once"}, ran: true, asked: true}}},
		{name: "an act refused does not run", tool: "write_file", calls: []call{{args: `{"path":"a"}`, answers: []string{"no"}, asked: true}}},
		{name: "nobody to approve: not run", tool: "write_file", calls: []call{{args: `{"path":"a"}`, asked: true}}},
		{name: "an allow rule on the argument", tool: "write_file", allow: []string{"write_file:path=docs/*"}, calls: []call{
			{args: `{"path":"docs/a.md"}`, ran: true},
			{args: `{"path":"src/a.go"}`, asked: true},
		}},
		{name: "deny wins over allow", tool: "write_file", allow: []string{"write_file"}, deny: []string{"write_file:path=*.env"}, calls: []call{{args: `{"path":"x.env"}`}}},
		{name: "deny applies to reads too", tool: "read_file", deny: []string{"read_file"}, calls: []call{{args: `{"read":true}`}}},
		{name: "an ask rule asks a read, even under yolo", tool: "read_file", ask: []string{"read_file"}, yolo: true, calls: []call{{args: `{"read":true}`, answers: []string{"once"}, ran: true, asked: true}}},
		{name: "yolo approves acts", tool: "write_file", yolo: true, calls: []call{{args: `{"path":"a"}`, ran: true}}},
		{name: "approved for the session: asked once", tool: "delete_item", server: "tracker", wantSessionOptions: true, calls: []call{
			{args: `{"id":1}`, answers: []string{"session"}, ran: true, asked: true},
			{args: `{"id":2}`, ran: true},
		}},
		{name: "MCP qualified deny rule", tool: "delete_item", server: "tracker", deny: []string{"mcp:tracker:delete_*"}, calls: []call{{args: `{"id":1}`}}},
		{name: "MCP qualified allow rule", tool: "delete_item", server: "tracker", allow: []string{"mcp:tracker:*"}, calls: []call{{args: `{"id":1}`, ran: true}}},
		{name: "MCP bare-name deny rule", tool: "delete_item", server: "tracker", deny: []string{"delete_item"}, calls: []call{{args: `{"id":1}`}}},
		{name: "MCP rule of another server does not allow", tool: "delete_item", server: "tracker", allow: []string{"mcp:other:*"}, calls: []call{{args: `{"id":1}`, asked: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checker, err := permissions.New(tt.allow, tt.ask, tt.deny)
			if err != nil {
				t.Fatal(err)
			}
			tool := &actingTool{name: tt.tool, server: tt.server}
			asker := &scriptedAsker{}
			g := &gated{Tool: tool, name: tt.tool, checker: checker, asker: asker, yolo: tt.yolo, session: &sessionApprovals{}}
			for i, c := range tt.calls {
				asker.ids, asker.asked = c.answers, nil
				before := tool.ran
				res, err := g.Call(context.Background(), exec.ToolCall{ID: "c", Name: tt.tool, Arguments: json.RawMessage(c.args)})
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if ran := tool.ran > before; ran != c.ran {
					t.Errorf("call %d: ran = %v, want %v (result %q)", i, ran, c.ran, res.Text)
				}
				if !c.ran && !res.IsError {
					t.Errorf("call %d: not run but no error result: %q", i, res.Text)
				}
				if asked := len(asker.asked) > 0; asked != c.asked {
					t.Errorf("call %d: asked = %v, want %v", i, asked, c.asked)
				}
				for _, q := range asker.asked {
					if q.Consent != prompt.ConsentApproval || q.Server != tt.server || !strings.Contains(q.Message, "the change") {
						t.Errorf("call %d: question %+v", i, q)
					}
					hasSession := false
					for _, o := range q.Options {
						hasSession = hasSession || o.ID == prompt.ApproveSession
					}
					if hasSession != (tt.wantSessionOptions || (len(tt.ask) == 0 && tt.tool != "read_file")) {
						t.Errorf("call %d: session option offered = %v", i, hasSession)
					}
				}
			}
		})
	}
}

// A call that sends a secret (exec.Approval.Secret), or that reads or
// changes a path hidden from what runs unasked (exec.Approval.Hidden), is
// asked every time, of a person: an allow rule or an earlier approval for
// the session of the same tool does not let it run unasked, and no "for
// this session" is offered; deny and --yolo apply as to any call.
func TestGatePersonOnlyCallsAlwaysAsked(t *testing.T) {
	for _, kind := range []struct{ name, args, hint string }{
		{"secret", `{"id":"$HITL_SECRET_1","secret":true}`, "secret"},
		{"hidden", `{"path":"secrets/key","hidden":"secrets/key, in /w/secrets (permissions.deny_read)"}`, "secrets/key, in /w/secrets (permissions.deny_read), hidden from what runs unasked"},
	} {
		t.Run(kind.name, func(t *testing.T) { testGatePersonOnly(t, kind.args, kind.hint) })
	}
}

func testGatePersonOnly(t *testing.T, args, hint string) {
	tests := []struct {
		name        string
		allow, deny []string
		yolo        bool
		session     bool // the tool was approved for the session before
		answers     []string
		ran, asked  bool
	}{
		{name: "an allow rule does not allow it", allow: []string{"mcp:tracker:delete_item"}, answers: []string{"once"}, ran: true, asked: true},
		{name: "a bare allow rule does not allow it", allow: []string{"delete_item"}, asked: true},
		{name: "a session approval of the tool does not cover it", session: true, answers: []string{"no"}, asked: true},
		{name: "deny still denies", deny: []string{"delete_item"}},
		{name: "yolo approves", yolo: true, ran: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checker, err := permissions.New(tt.allow, nil, tt.deny)
			if err != nil {
				t.Fatal(err)
			}
			tool := &actingTool{name: "delete_item", server: "tracker"}
			asker := &scriptedAsker{ids: tt.answers}
			session := &sessionApprovals{}
			if tt.session {
				session.restore("k:delete_item")
			}
			g := &gated{Tool: tool, name: "delete_item", checker: checker, asker: asker, yolo: tt.yolo, session: session}
			res, err := g.Call(context.Background(), exec.ToolCall{ID: "c", Name: "delete_item", Arguments: json.RawMessage(args)})
			if err != nil {
				t.Fatal(err)
			}
			if ran := tool.ran > 0; ran != tt.ran {
				t.Errorf("ran = %v, want %v (result %q)", ran, tt.ran, res.Text)
			}
			if asked := len(asker.asked) > 0; asked != tt.asked {
				t.Fatalf("asked = %v, want %v", asked, tt.asked)
			}
			for _, q := range asker.asked {
				for _, o := range q.Options {
					if o.ID == prompt.ApproveSession {
						t.Errorf("a call that sends a secret offers %q", o.ID)
					}
				}
				if !strings.Contains(q.Hint, hint) && tt.allow != nil {
					t.Errorf("hint %q does not say %q", q.Hint, hint)
				}
				if !q.PersonOnly {
					t.Error("an approver program may answer it")
				}
			}
		})
	}
}
