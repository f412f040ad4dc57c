package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/internal/termtext"
)

// dmrConfigured is a Docker Model Runner model whose provider_opts
// (runtime flags, speculative decoding) are sent to Model Runner, with the
// context size (max_tokens), by POST {engines}/_configure before the first
// turn, as cagent does. cagent goes on when Model Runner refuses them;
// hitl stops: the agent's author asked for that configuration.
type dmrConfigured struct {
	exec.Model
	client *http.Client
	url    string
	body   []byte
	once   sync.Once
	err    error
}

type dmrConfigure struct {
	Model        string          `json:"model"`
	ContextSize  *int32          `json:"context-size,omitempty"`
	RuntimeFlags []string        `json:"runtime-flags,omitempty"`
	Speculative  *dmrSpeculative `json:"speculative,omitempty"`
}

type dmrSpeculative struct {
	DraftModel        string  `json:"draft_model,omitempty"`
	NumTokens         int     `json:"num_tokens,omitempty"`
	MinAcceptanceRate float64 `json:"min_acceptance_rate,omitempty"`
}

// DMRConfigureURL is the _configure endpoint beside an OpenAI base URL
// (http://h/engines/v1 → http://h/engines/_configure).
func DMRConfigureURL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/v1") + "/_configure"
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1") + "/_configure"
	return u.String()
}

func newDMRConfigured(m exec.Model, cm *config.Model, base string, client *http.Client) (*dmrConfigured, error) {
	o := cm.ProviderOpts.DMR
	req := dmrConfigure{Model: cm.Model, RuntimeFlags: o.RuntimeFlags}
	if cm.MaxTokens != nil {
		cs := int32(min(*cm.MaxTokens, 1<<31-1))
		req.ContextSize = &cs
	}
	if o.DraftModel != "" || o.NumTokens != 0 || o.AcceptanceRate != 0 {
		req.Speculative = &dmrSpeculative{DraftModel: o.DraftModel, NumTokens: o.NumTokens, MinAcceptanceRate: o.AcceptanceRate}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return &dmrConfigured{Model: m, client: client, url: DMRConfigureURL(base), body: body}, nil
}

// Turn configures the model once, then runs the turn.
func (d *dmrConfigured) Turn(ctx context.Context, req exec.Request) (exec.Turn, error) {
	d.once.Do(func() { d.err = d.configure(ctx) })
	if d.err != nil {
		return exec.Turn{}, d.err
	}
	return d.Model.Turn(ctx, req)
}

func (d *dmrConfigured) configure(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(d.body))
	if err != nil {
		return fmt.Errorf("dmr: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("dmr: configuring the model (provider_opts): %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusAccepted && res.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 2000))
		return fmt.Errorf("dmr: configuring the model (provider_opts) at %s: %s: %s", d.url, res.Status, termtext.Line(strings.TrimSpace(string(msg))))
	}
	return nil
}
