package config

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Fallback is an agent's fallback: key, as cagent runs it: a turn that
// fails on a model is retried on it (Retries times, for errors worth
// retrying: 5xx, timeouts, cut streams) and then on the next model of
// Models; after the first model failed for another reason (429, 4xx) and a
// fallback answered, the turns of the next Cooldown stay on that fallback.
type Fallback struct {
	Models   []*Model
	Retries  int           // retries per model; -1 in the file means none
	Cooldown time.Duration // default DefaultCooldown
}

// cagent's fallback defaults.
const (
	DefaultFallbackRetries = 2
	DefaultCooldown        = time.Minute
)

// autoProviders are cagent's model: auto choices, in order: the first
// provider one of whose variables is set, else dmr.
var autoProviders = []struct {
	provider, model string
	vars            []string
}{
	{"anthropic", "claude-sonnet-4-5", []string{"ANTHROPIC_API_KEY"}},
	{"openai", "gpt-5-mini", []string{"OPENAI_API_KEY"}},
	{"google", "gemini-2.5-flash", []string{"GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"}},
	{"mistral", "mistral-small-latest", []string{"MISTRAL_API_KEY"}},
	{"amazon-bedrock", "global.anthropic.claude-sonnet-4-5-20250929-v1:0", []string{"AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_ROLE_ARN"}},
}

// autoModel resolves model: auto as cagent does, from the variables set
// when the file is loaded.
func (l *loader) autoModel(n *yaml.Node) *Model {
	provider, name, why := "dmr", "ai/qwen3:latest", ""
	var maxTokens int64 = 16000
	for _, p := range autoProviders {
		for _, v := range p.vars {
			if s, ok := l.lookup(v); ok && s != "" {
				provider, name, why, maxTokens = p.provider, p.model, v, 32000
				break
			}
		}
		if why != "" {
			break
		}
	}
	switch {
	case provider == "amazon-bedrock":
		l.errorf(n, "model: auto picks amazon-bedrock (%s is set), which is not supported by hitl; name a model", why)
		return nil
	case why == "GOOGLE_GENAI_USE_VERTEXAI":
		l.errorf(n, "model: auto picks Vertex AI (GOOGLE_GENAI_USE_VERTEXAI is set), which is not supported by hitl; name a model")
		return nil
	}
	m := &Model{Name: "auto", Provider: provider, Model: name, MaxTokens: &maxTokens, Pos: pos(n), Auto: "no provider key is set"}
	if why != "" {
		m.Auto = why + " is set"
	}
	ApplyPreset(m)
	return m
}

// alloy resolves comma-joined model references (an alloy: the models take
// turns), each a key of models: (itself possibly an alloy) or
// provider/model.
func (l *loader) alloy(a *Agent, n *yaml.Node, ref string, models map[string]*Model, depth int) *Model {
	m := &Model{Name: ref, Pos: pos(n)}
	for part := range strings.SplitSeq(ref, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		sub := l.modelRef(a, n, part, models, depth+1)
		if sub == nil {
			return nil
		}
		if len(sub.Alloy) > 0 {
			m.Alloy = append(m.Alloy, sub.Alloy...)
		} else {
			m.Alloy = append(m.Alloy, sub)
		}
	}
	if len(m.Alloy) == 0 {
		l.errorf(n, "model %q names no model", ref)
		return nil
	}
	m.Provider, m.API = "alloy", "alloy"
	return m
}

// modelRef resolves one model reference: a key of models: (an alloy model
// of models: expanded), auto, comma-joined references, or provider/model.
func (l *loader) modelRef(a *Agent, n *yaml.Node, ref string, models map[string]*Model, depth int) *Model {
	if depth > 8 {
		l.errorf(n, "model %q: alloy models nest too deep (a cycle?)", ref)
		return nil
	}
	if m, ok := models[ref]; ok {
		if m.alloyRef != "" && m.Alloy == nil {
			am := l.alloy(a, n, m.alloyRef, models, depth)
			if am == nil {
				return nil
			}
			m.Alloy, m.Provider, m.API = am.Alloy, am.Provider, am.API
		}
		l.resolveRoutes(a, m, models, depth)
		return m
	}
	switch {
	case ref == "auto":
		return l.autoModel(n)
	case strings.Contains(ref, ","):
		return l.alloy(a, n, ref, models, depth)
	}
	return l.inlineModel(a, n, ref, models)
}

// fallback reads an agent's fallback: {models, retries, cooldown}.
func (l *loader) fallback(a *Agent, n *yaml.Node, models map[string]*Model) *Fallback {
	f := &Fallback{Retries: DefaultFallbackRetries, Cooldown: DefaultCooldown}
	if !l.want(n, yaml.MappingNode, "a mapping with models, retries and cooldown") {
		return nil
	}
	l.eachKey(n, "fallback key", []string{"models", "retries", "cooldown"}, nil, func(key string, k, v *yaml.Node) {
		switch key {
		case "models":
			for i, ref := range l.strings(v) {
				if m := l.modelRef(a, v.Content[i], ref, models, 0); m != nil {
					f.Models = append(f.Models, m)
				}
			}
		case "retries":
			switch r := l.integer(v, -1); r {
			case -1:
				f.Retries = 0
			case 0:
				// cagent: 0 is the default.
			default:
				f.Retries = int(r)
			}
		case "cooldown":
			f.Cooldown = l.duration(v)
		}
	})
	if len(f.Models) == 0 && len(l.errs) == 0 {
		l.errorf(n, "fallback has no models: list the models to try when %s's model fails", a.Name)
	}
	return f
}

// withFallback is the agent's model with its fallback attached (a copy:
// the named model may serve other agents).
func withFallback(m *Model, f *Fallback) *Model {
	if m == nil || f == nil {
		return m
	}
	c := *m
	c.Fallback = f
	return &c
}

// Route is one routing: rule: the model its examples send turns to.
type Route struct {
	Model    *Model
	Examples []string
}

type routeRef struct {
	ref      string
	node     *yaml.Node
	examples []string
}

// routing reads a model's routing: list; its models are resolved when an
// agent names the model (models: may define them later).
func (l *loader) routing(m *Model, n *yaml.Node) {
	mappings(l, n, "a list of routing rules", "a routing rule with model and examples", func(r *yaml.Node) bool {
		rr := routeRef{node: r}
		l.eachKey(r, "routing key", []string{"model", "examples"}, nil, func(key string, k, v *yaml.Node) {
			switch key {
			case "model":
				rr.ref, rr.node = l.str(v), v
			case "examples":
				rr.examples = l.strings(v)
			}
		})
		switch {
		case rr.ref == "":
			l.errorf(r, "a routing rule needs model: (a key of models: or provider/model)")
		case len(rr.examples) == 0:
			l.errorf(r, "routing rule for %s has no examples: list phrases that should go to it", rr.ref)
		}
		m.routeRefs = append(m.routeRefs, rr)
		return true
	})
	if len(m.routeRefs) == 0 && n.Kind == yaml.SequenceNode {
		l.errorf(n, "routing is empty; list rules ({model, examples}) or remove it")
	}
}

// resolveRoutes resolves a routed model's rules once.
func (l *loader) resolveRoutes(a *Agent, m *Model, models map[string]*Model, depth int) {
	if len(m.routeRefs) == 0 || m.Routing != nil {
		return
	}
	m.Routing = []Route{}
	m.routing = true
	defer func() { m.routing = false }()
	for _, rr := range m.routeRefs {
		sub := l.modelRef(a, rr.node, rr.ref, models, depth+1)
		if sub != nil && sub.routing {
			l.errorf(rr.node, "routing rule model %s routes back to %s (a cycle); route to a model without routing", rr.ref, sub.Name)
			continue
		}
		if sub != nil {
			m.Routing = append(m.Routing, Route{Model: sub, Examples: rr.examples})
		}
	}
}
