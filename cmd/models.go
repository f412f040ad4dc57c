package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/exec/model/cassette"
)

// ModelOptions are the flags that choose and record the model: --model,
// --record, --replay.
type ModelOptions struct {
	Models []string
	Record string
	Replay string
}

func (o *ModelOptions) addFlags(c interface {
	StringArrayVar(*[]string, string, []string, string)
	StringVar(*string, string, string, string)
}) {
	c.StringArrayVar(&o.Models, "model", nil, "override a model: `[AGENT=]PROVIDER/MODEL`, or a key of models: (repeatable)")
	c.StringVar(&o.Record, "record", "", "record the model HTTP traffic to the cassette `FILE`")
	c.StringVar(&o.Replay, "replay", "", "replay the model HTTP traffic from the cassette `FILE` (offline, no key needed)")
}

// modelFor returns the model agent runs with, after the --model overrides.
//
// An override names an agent (AGENT=, default the agent being run) and
// either a key of models: or PROVIDER/MODEL. An inline PROVIDER/MODEL with
// the same provider as the agent's model keeps that model's settings
// (base_url, token_key, max_tokens, …) and changes only the model; with
// another provider it is a bare model of that provider.
func modelFor(cfg *config.Config, agent *config.Agent, overrides []string) (*config.Model, error) {
	m := agent.Model
	for _, o := range overrides {
		name, spec, ok := strings.Cut(o, "=")
		if !ok {
			name, spec = agent.Name, o
		} else if cfg.Agent(name) == nil {
			return nil, usagef("--model %s: no agent %q; its agents: %s", o, name, strings.Join(cfg.AgentNames(), ", "))
		}
		if name != agent.Name {
			continue
		}
		nm, err := parseModel(cfg, m, spec)
		if err != nil {
			return nil, usagef("--model %s: %v", o, err)
		}
		m = nm
	}
	return m, nil
}

func parseModel(cfg *config.Config, current *config.Model, spec string) (*config.Model, error) {
	for _, named := range cfg.Models {
		if named.Name == spec {
			return named, nil
		}
	}
	provider, name, ok := strings.Cut(spec, "/")
	if !ok || provider == "" || name == "" {
		return nil, fmt.Errorf("want PROVIDER/MODEL (%s), or a key of models:", strings.Join(overrideProviders(), ", "))
	}
	_, preset := config.Presets[provider]
	switch {
	case provider == "openai", provider == "anthropic", provider == "google", provider == "ollama", preset:
	case provider == "script":
		return nil, errors.New("a script model needs its script: define it under models: and name its key")
	case config.UnsupportedProvider(provider):
		return nil, fmt.Errorf("provider %q is not supported by hitl (supported: %s)", provider, strings.Join(overrideProviders(), ", "))
	default:
		return nil, fmt.Errorf("unknown provider %q (valid: %s)", provider, strings.Join(overrideProviders(), ", "))
	}
	if current != nil && current.Provider == provider {
		m := *current
		m.Name, m.Model = spec, name
		config.ApplyPreset(&m) // the API may change with the model (codex: Responses)
		return &m, nil
	}
	m := &config.Model{Name: spec, Provider: provider, Model: name}
	config.ApplyPreset(m) // a preset's base URL and key variable
	return m, nil
}

// overrideProviders are the providers --model PROVIDER/MODEL accepts:
// openai, anthropic, google, ollama and the OpenAI-compatible presets.
func overrideProviders() []string {
	list := []string{"openai", "anthropic", "google", "ollama"}
	presets := make([]string, 0, len(config.Presets))
	for p := range config.Presets {
		presets = append(presets, p)
	}
	sort.Strings(presets)
	return append(list, presets...)
}

// openCassette opens the --record or --replay cassette, if any.
func openCassette(o *ModelOptions) (*cassette.Cassette, error) {
	switch {
	case o.Record != "" && o.Replay != "":
		return nil, usagef("--record and --replay cannot be used together")
	case o.Record != "":
		// The models' transport: what goes to the network is bounded the
		// same way when recording.
		c, err := cassette.Record(o.Record, model.DefaultHTTPClient().Transport)
		if err != nil {
			return nil, usagef("--record: %v", err)
		}
		return c, nil
	case o.Replay != "":
		c, err := cassette.Replay(o.Replay)
		if err != nil {
			return nil, usagef("--replay: %v", err)
		}
		return c, nil
	}
	return nil, nil
}

// spinner shows on stderr that the model is working, while a turn streams.
type spinner struct {
	w         io.Writer
	mu        sync.Mutex
	stop      chan struct{}
	done      chan struct{}
	streaming atomic.Bool
	// tool, when set, is the tool whose call is running (and since when),
	// shown instead of the model.
	tool  string
	since time.Time
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// toolSpinDelay keeps the spinner of a quick tool call from flashing.
const toolSpinDelay = 500 * time.Millisecond

// Delta is told of each streamed chunk (model.Options.OnDelta).
func (s *spinner) Delta() { s.streaming.Store(true) }

// Start shows the spinner while the model thinks.
func (s *spinner) Start() { s.start("", time.Time{}) }

// StartTool shows the spinner, with the time elapsed, while a call of tool
// runs; since is when it started.
func (s *spinner) StartTool(tool string, since time.Time) { s.start(tool, since) }

func (s *spinner) start(tool string, since time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		return
	}
	s.streaming.Store(false)
	s.tool, s.since = tool, since
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.run(s.stop, s.done, tool, since)
}

func (s *spinner) run(stop, done chan struct{}, tool string, since time.Time) {
	defer close(done)
	if tool != "" {
		select {
		case <-stop:
			return
		case <-time.After(toolSpinDelay):
		}
	}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		label := "waiting for the model"
		switch {
		case tool != "":
			label = fmt.Sprintf("running %s (%s)", tool, time.Since(since).Round(time.Second))
		case s.streaming.Load():
			label = "the model is writing"
		}
		fmt.Fprintf(s.w, "\r%s %s…\x1b[K", spinFrames[i%len(spinFrames)], label)
		select {
		case <-stop:
			fmt.Fprint(s.w, "\r\x1b[K")
			return
		case <-t.C:
		}
	}
}

func (s *spinner) Stop() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.stop, s.done = nil, nil
}

// spinModel shows the spinner while each turn runs.
type spinModel struct {
	exec.Model
	spin *spinner
}

func (m spinModel) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	m.spin.Start()
	defer m.spin.Stop()
	return m.Model.Turn(ctx, req)
}

// useSpinner says whether to draw the spinner: a person watches stderr.
func useSpinner(opts *ExecOptions) bool {
	return !opts.JSON && !opts.Quiet && opts.IO.IsStderrTTY() && opts.IO.Getenv("TERM") != "dumb"
}
