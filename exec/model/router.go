package model

import (
	"context"
	"encoding/json"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

// Router is cagent's rule-based model (a model with routing:): each turn
// goes to the route whose examples best match the conversation's last user
// message, by full-text relevance (BM25) with English analysis as cagent's
// (words lowercased, possessives, stop words and stems removed), or to the
// model itself when none matches.
type Router struct {
	index  *exampleIndex
	routes []exec.Model // routes[0] is the model itself
}

func newRouter(m *config.Model, o Options) (*Router, error) {
	self := *m
	self.Routing = nil
	def, err := New(&self, o)
	if err != nil {
		return nil, err
	}
	r := &Router{routes: []exec.Model{def}, index: &exampleIndex{}}
	for i, route := range m.Routing {
		rm, err := New(route.Model, o)
		if err != nil {
			return nil, err
		}
		r.routes = append(r.routes, rm)
		for _, ex := range route.Examples {
			r.index.add(i+1, ex)
		}
	}
	return r, nil
}

// Route is the index in routes of the model for req.
func (r *Router) Route(req exec.Request) int {
	var last string
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == exec.RoleUser {
			last = req.Messages[i].Text
			break
		}
	}
	if last == "" {
		return 0
	}
	return r.index.best(last)
}

// Turn runs the turn on the route the last user message matches.
func (r *Router) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	return r.routes[r.Route(req)].Turn(ctx, req)
}

// State is each model's state.
func (r *Router) State() json.RawMessage {
	data, _ := json.Marshal(multiState{Models: subStates(r.routes)})
	return data
}

// Restore sets the state saved by State.
func (r *Router) Restore(data json.RawMessage) error {
	var s multiState
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	return restoreSubs(r.routes, s.Models)
}
