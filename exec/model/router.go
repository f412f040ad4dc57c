package model

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

// Router is cagent's rule-based model (a model with routing:): each turn
// goes to the route whose examples best match the conversation's last user
// message, by Bleve full-text search with the English analyzer as cagent
// does it, or to the model itself when none matches.
type Router struct {
	index  bleve.Index
	routes []exec.Model // routes[0] is the model itself
}

func newRouter(m *config.Model, o Options) (*Router, error) {
	self := *m
	self.Routing = nil
	def, err := New(&self, o)
	if err != nil {
		return nil, err
	}
	r := &Router{routes: []exec.Model{def}}
	im := mapping.NewIndexMapping()
	doc := mapping.NewDocumentMapping()
	text := mapping.NewTextFieldMapping()
	text.Analyzer = "en"
	doc.AddFieldMappingsAt("text", text)
	im.DefaultMapping = doc
	if r.index, err = bleve.NewMemOnly(im); err != nil {
		return nil, fmt.Errorf("model %s: routing index: %w", m.Name, err)
	}
	for i, route := range m.Routing {
		rm, err := New(route.Model, o)
		if err != nil {
			return nil, err
		}
		r.routes = append(r.routes, rm)
		for j, ex := range route.Examples {
			if err := r.index.Index(fmt.Sprintf("%d_%d", i+1, j), map[string]any{"text": ex}); err != nil {
				return nil, fmt.Errorf("model %s: routing index: %w", m.Name, err)
			}
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
	q := bleve.NewMatchQuery(last)
	q.SetField("text")
	sr := bleve.NewSearchRequest(q)
	sr.Size = 1
	res, err := r.index.Search(sr)
	if err != nil || res.Total == 0 || len(res.Hits) == 0 {
		return 0
	}
	var route, ex int
	if _, err := fmt.Sscanf(res.Hits[0].ID, "%d_%d", &route, &ex); err != nil || route <= 0 || route >= len(r.routes) {
		return 0
	}
	return route
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
