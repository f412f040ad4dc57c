// Package model builds the Model a config names: the script model, or an
// HTTP provider (openai, ollama, anthropic).
//
// Keys and base URLs (DESIGN §8): the key is read, through Options.Getenv,
// from the variable named by the model's token_key (default OPENAI_API_KEY
// for openai, ANTHROPIC_API_KEY for anthropic; ollama sends no key unless
// token_key is set) and passed to the SDK explicitly; the SDKs' own
// environment defaults are never used, so an ambient key is never sent to a
// base_url it was not named for. A missing key is a *MissingKeyError, returned
// by New before any request (the CLI exits 2 naming the variable). The base
// URL is the model's base_url, else OPENAI_BASE_URL / ANTHROPIC_BASE_URL /
// GOOGLE_GEMINI_BASE_URL (openai / anthropic / google), else the provider's
// default (https://api.openai.com/v1, http://localhost:11434/v1,
// https://api.anthropic.com, https://generativelanguage.googleapis.com/).
//
// Cassettes: set Options.Cassette (from cassette.Record or cassette.Replay)
// and every request goes through it. When replaying, SDK retries are off and
// no key is needed. The caller owns the cassette and must Close it (in a
// defer, so it is saved on every exit); use its Now as the clock for
// add_date.
//
// Errors of a turn: a *provider error with the provider's message for an
// error status (401, 403, 400, or 429/5xx after the bounded retries), a
// *cassette.MissError when a replayed cassette has no answer, a
// *TooLargeError when the response passed a bound, the context's error when
// the run is cancelled. All of them exit 1 except cancellation.
//
// Bounds (DESIGN §8): a turn's text, thinking and tool calls are counted as
// they stream in; past Options.MaxTurnBytes (16 MiB) the stream is closed
// and the turn fails, without retrying. Below the SDKs, every response body
// is bounded too: one event of a stream (the bytes up to a blank line, which
// the SDKs' decoders hold whole) at the turn bound too, an error body at
// MaxErrorBody. Memory for a turn is thus bounded by a small multiple of the
// turn bound, whatever the server sends (measured by
// TestStreamForeverPeakMemory).
package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/ext"
	"github.com/hitl-dev/hitl/exec/model/anthropic"
	"github.com/hitl-dev/hitl/exec/model/cassette"
	"github.com/hitl-dev/hitl/exec/model/internal/provider"
	"github.com/hitl-dev/hitl/exec/model/openai"
	"github.com/hitl-dev/hitl/exec/model/remote"
	"github.com/hitl-dev/hitl/exec/model/script"
	"github.com/hitl-dev/hitl/exec/sandbox"
)

// Options are what a provider needs from the run beyond its config.
type Options struct {
	// Getenv looks up environment variables (keys, base URLs); nil means
	// os.Getenv.
	Getenv func(string) string
	// HTTPClient is shared across turns (keep-alive); nil means a default
	// shared by every model. Ignored when Cassette is set.
	HTTPClient *http.Client
	// Message is the first user turn (the script model's .Message).
	Message string

	// Cassette, when set, records or replays every request of the model.
	Cassette *cassette.Cassette
	// OnDelta, when set, is called as each streamed chunk arrives (for a
	// spinner). It must be cheap and must not block.
	OnDelta func()
	// MaxRetries bounds retries of 429, 5xx, dropped connections and cut
	// streams; 0 means 3, negative means none.
	MaxRetries int
	// MaxRetryDelay is the longest Retry-After honoured (longer: the error
	// is returned at once); 0 means 60s.
	MaxRetryDelay time.Duration
	// TurnRetryDelay is the first wait before a cut stream is retried as a
	// whole turn (doubling after); 0 means 500ms.
	TurnRetryDelay time.Duration
	// MaxTurnBytes bounds the text, thinking and tool calls of one turn;
	// 0 means DefaultMaxTurnBytes (16 MiB). Past it the turn fails with a
	// *TooLargeError, not retried.
	MaxTurnBytes int64
	// Sandbox is the run's sandbox, where hitl-ext (Gemini's SDK, package
	// ext) starts at a google model's first turn; nil, or nil returned:
	// none.
	Sandbox func() *sandbox.Sandbox
	// Track, when set, is given each model New makes that holds a process
	// (hitl-ext), to be closed when the run ends.
	Track func(io.Closer)
}

// MissingKeyError is a provider key that is not set. Var names the
// environment variable.
type MissingKeyError struct {
	Model string // the model's name in the agent file
	Var   string
	Alt   string // another variable that would do (google: GEMINI_API_KEY)
}

func (e *MissingKeyError) Error() string {
	v := e.Var
	if e.Alt != "" {
		v += " (or " + e.Alt + ")"
	}
	return fmt.Sprintf("model %s: the environment variable %s is not set (it holds the API key; token_key names it)", e.Model, v)
}

// APIError is an error status from a provider, with the provider's message.
type APIError = provider.APIError

// StreamError is a response stream that broke (Cut) or made no sense.
type StreamError = provider.StreamError

// TooLargeError is a response past a bound: a turn or one stream event
// past MaxTurnBytes, an error body past MaxErrorBody. hitl stopped reading it; it is not retried.
type TooLargeError = provider.TooLargeError

// Bounds of a model turn (DESIGN §8).
const (
	DefaultMaxTurnBytes = provider.DefaultMaxTurnBytes
	MaxErrorBody        = provider.MaxErrorBody
)

// geminiName is the google provider's name in its errors (package gemini's
// Name, which hitl does not link).
const geminiName = "google"

// Default base URLs.
const (
	OpenAIBaseURL    = "https://api.openai.com/v1"
	OllamaBaseURL    = "http://localhost:11434/v1"
	AnthropicBaseURL = "https://api.anthropic.com"
	GeminiBaseURL    = "https://generativelanguage.googleapis.com/"
)

var (
	defaultClientOnce sync.Once
	defaultClient     *http.Client
)

// DefaultHTTPClient is the client shared by every model that is given none.
// It has no overall timeout (a turn streams as long as it needs; the run's
// context bounds it), but a server silent for StreamIdleTimeout is
// abandoned.
func DefaultHTTPClient() *http.Client {
	defaultClientOnce.Do(func() {
		defaultClient = &http.Client{Transport: WithIdleTimeout(http.DefaultTransport.(*http.Transport).Clone(), StreamIdleTimeout)}
	})
	return defaultClient
}

// Default key variables of the providers that send one.
const (
	OpenAIKeyVar    = "OPENAI_API_KEY"
	AnthropicKeyVar = "ANTHROPIC_API_KEY"
	// GoogleKeyVar, else GeminiKeyVar, holds the google provider's key (as
	// cagent reads them) when token_key names none.
	GoogleKeyVar = "GOOGLE_API_KEY"
	GeminiKeyVar = "GEMINI_API_KEY"
)

// KeyVars names the environment variables that may hold model API keys for
// cfg: every token_key, and the providers' defaults. Shell commands do not
// inherit them.
func KeyVars(cfg *config.Config) []string {
	names := []string{OpenAIKeyVar, AnthropicKeyVar, GoogleKeyVar, GeminiKeyVar}
	var add func(m *config.Model)
	add = func(m *config.Model) {
		if m == nil {
			return
		}
		if m.TokenKey != "" {
			names = append(names, m.TokenKey)
		}
		for _, sub := range m.Alloy {
			add(sub)
		}
		for _, r := range m.Routing {
			add(r.Model)
		}
		if m.Fallback != nil {
			for _, sub := range m.Fallback.Models {
				add(sub)
			}
		}
	}
	for _, m := range cfg.Models {
		add(m)
	}
	for _, a := range cfg.Agents {
		add(a.Model)
		for _, ts := range a.Toolsets {
			add(ts.Model) // a toolset's model:
			for _, m := range ts.Models {
				add(m) // a model_picker's models:
			}
		}
		for _, r := range a.RAG {
			for _, st := range r.Strategies {
				add(st.EmbeddingModel)
				add(st.ChatModel)
			}
			if r.Results.Rerank != nil {
				add(r.Results.Rerank.Model)
			}
		}
	}
	return names
}

// New returns the model m describes.
func New(m *config.Model, o Options) (exec.Model, error) {
	switch {
	case len(m.Alloy) > 0:
		return newAlloy(m, o)
	case m.Fallback != nil:
		return newFallback(m, o)
	case len(m.Routing) > 0:
		return newRouter(m, o)
	}
	if m.Provider == "script" {
		return script.New(m, o.Message), nil
	}
	c, err := resolve(m, o)
	if err != nil {
		return nil, err
	}
	pm, err := newProvider(m, c, o)
	if err != nil {
		return nil, err
	}
	return maskKey(pm, c.APIKey), nil
}

// newProvider is the provider's model for m, reached as c says.
func newProvider(m *config.Model, c provider.Config, o Options) (exec.Model, error) {
	switch {
	case m.Provider == "anthropic":
		return anthropic.New(c)
	case m.Provider == "google":
		// Gemini's SDK is linked into hitl-ext, not hitl (package ext):
		// found now, so that a missing one ends the run before it starts.
		path, err := ext.Find(fmt.Sprintf("model %s (provider google)", m.Name), o.Getenv)
		if err != nil {
			return nil, err
		}
		rm := remote.New(geminiName, c, path, o.Sandbox)
		if o.Track != nil {
			o.Track(rm)
		}
		return rm, nil
	case m.API == config.APIResponses:
		return openai.NewResponses(m.Provider, c)
	case m.Provider == "dmr" && m.ProviderOpts.DMR != nil:
		return newDMRConfigured(openai.New(m.Provider, c), m, c.BaseURL, c.HTTPClient)
	default:
		return openai.New(m.Provider, c), nil
	}
}

// resolve is how m's provider is reached: its base URL, key (from its
// variable) and HTTP client.
func resolve(m *config.Model, o Options) (provider.Config, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	replay := o.Cassette != nil && o.Cassette.Replaying()

	var keyVar, baseEnv, baseDefault string
	switch m.Provider {
	case "openai":
		keyVar, baseEnv, baseDefault = OpenAIKeyVar, "OPENAI_BASE_URL", OpenAIBaseURL
	case "ollama":
		baseDefault = OllamaBaseURL
	case "anthropic":
		keyVar, baseEnv, baseDefault = AnthropicKeyVar, "ANTHROPIC_BASE_URL", AnthropicBaseURL
	case "google":
		keyVar, baseEnv, baseDefault = GoogleKeyVar, "GOOGLE_GEMINI_BASE_URL", GeminiBaseURL
		if m.TokenKey == "" && getenv(GoogleKeyVar) == "" && getenv(GeminiKeyVar) != "" {
			keyVar = GeminiKeyVar
		}
	default:
		// An OpenAI-compatible preset (config.Presets) or a providers:
		// entry: config filled its base URL and key variable (none for dmr
		// or an entry without token_key); no OPENAI_* fallback.
		if m.API != "openai" && m.API != config.APIResponses {
			return provider.Config{}, fmt.Errorf("model %s: unknown provider %q (valid: openai, anthropic, ollama, script)", m.Name, m.Provider)
		}
	}
	if m.TokenKey != "" {
		keyVar = m.TokenKey
	}
	base := m.BaseURL
	if base == "" && baseEnv != "" {
		base = getenv(baseEnv)
	}
	if base == "" {
		base = baseDefault
	}
	var key string
	if keyVar != "" {
		key = getenv(keyVar)
		// A local OpenAI-compatible server (llama.cpp, Ollama, vLLM on
		// this machine) takes no key: none is sent when none is set.
		// Anywhere else, and whenever token_key names one, it is needed.
		localNoKey := m.Provider == "openai" && m.TokenKey == "" && loopback(base)
		if key == "" && !replay && !localNoKey {
			e := &MissingKeyError{Model: m.Name, Var: keyVar}
			if m.Provider == "google" && m.TokenKey == "" {
				e.Alt = GeminiKeyVar
			}
			return provider.Config{}, e
		}
	}

	c := provider.Config{
		Model:          m,
		APIKey:         key,
		BaseURL:        base,
		HTTPClient:     o.HTTPClient,
		MaxRetries:     o.MaxRetries,
		MaxRetryDelay:  o.MaxRetryDelay,
		TurnRetryDelay: o.TurnRetryDelay,
		OnDelta:        o.OnDelta,
		MaxTurnBytes:   o.MaxTurnBytes,
	}
	if o.Cassette != nil {
		c.HTTPClient = o.Cassette.Client()
		if replay {
			c.MaxRetries = -1
		}
	}
	if c.HTTPClient == nil {
		c.HTTPClient = DefaultHTTPClient()
	}
	c.HTTPClient = sameOrigin(c.HTTPClient)
	c.HTTPClient.Transport = provider.LimitBodies(c.HTTPClient.Transport, c.MaxTurn(), provider.MaxErrorBody)
	return c, nil
}

// Embedder turns texts into vectors (a rag strategy's embedding_model).
type Embedder interface {
	Embed(ctx context.Context, texts []string, dims int) ([][]float64, error)
}

// NewEmbedder returns the embeddings API of m's provider: OpenAI's and the
// OpenAI-compatible ones' (/embeddings).
func NewEmbedder(m *config.Model, o Options) (Embedder, error) {
	switch {
	case len(m.Alloy) > 0 || m.Fallback != nil || len(m.Routing) > 0 || m.Provider == "script":
		return nil, fmt.Errorf("model %s: an embedding model is one model of a provider", m.Name)
	case m.Provider == "anthropic" || m.Provider == "google":
		return nil, fmt.Errorf("model %s: embeddings from provider %s are not supported by hitl; use an OpenAI-compatible provider", m.Name, m.Provider)
	}
	c, err := resolve(m, o)
	if err != nil {
		return nil, err
	}
	return openai.NewEmbedder(c), nil
}

// sameOrigin returns a copy of client (sharing its transport) that follows a
// redirect only within the origin of the request: Go's client drops
// Authorization on a redirect to another host, but not Anthropic's
// x-api-key, so following one would send the key where it was not named.
func sameOrigin(client *http.Client) *http.Client {
	c := *client
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if from := via[0].URL; req.URL.Scheme != from.Scheme || !strings.EqualFold(req.URL.Host, from.Host) {
			return fmt.Errorf("redirected from %s to %s://%s: hitl follows no redirect to another host, so the API key stays with the base URL", from.Host, req.URL.Scheme, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// loopback says whether base is an http(s) URL on this machine: localhost,
// 127.0.0.0/8 or ::1.
func loopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
