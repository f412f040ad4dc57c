// Package config loads and validates agent.yaml files: a compatible subset of
// docker cagent's format (see DESIGN §7).
package config

import (
	"encoding/json"
	"time"
)

// Config is one agent.yaml file.
type Config struct {
	// Path is the file as it was named on the command line.
	Path string
	// SHA256 is the hex digest of the file's bytes (sessions refuse to
	// resume when the file changed).
	SHA256  string
	Version string
	// Models holds the named models, in file order.
	Models      []*Model
	Agents      []*Agent
	Permissions Permissions
	Metadata    any
}

// Pos is a position in the file, 1-based.
type Pos struct {
	Line, Col int
}

// Model is a model definition, named or inline.
type Model struct {
	Name     string // key under models:, or the inline "provider/model" text
	Provider string // openai | anthropic | ollama | script
	Model    string
	BaseURL  string
	TokenKey string
	// Optional sampling settings; nil means "not set, send nothing".
	MaxTokens      *int64
	Temperature    *float64
	TopP           *float64
	ThinkingBudget *ThinkingBudget
	// Script is the script provider's list of assistant turns.
	Script []ScriptEntry
	Pos    Pos
}

// ThinkingBudget is either an effort word (minimal|low|medium|high) or a
// number of tokens.
type ThinkingBudget struct {
	Effort string
	Tokens int64
}

// ScriptEntry is one assistant turn of a script model.
type ScriptEntry struct {
	Text      string
	When      string
	ToolCalls []ScriptCall
	Pos       Pos
}

// ScriptCall is one tool call of a script entry. Arguments holds the decoded
// YAML value; ArgumentsJSON, when set, is a template rendering JSON.
type ScriptCall struct {
	Name          string
	Arguments     json.RawMessage
	ArgumentsJSON string
	Pos           Pos
}

// Agent is one entry under agents:.
type Agent struct {
	Name               string
	Model              *Model
	Description        string
	Instruction        string
	MaxIterations      int // 0: not set
	AddDate            bool
	AddEnvironmentInfo bool
	WelcomeMessage     string
	Commands           map[string]string
	Toolsets           []*Toolset
	Pos                Pos
}

// Toolset is one entry of an agent's toolsets:. Which fields apply depends on
// Type; the loader rejects keys that do not belong to the type.
type Toolset struct {
	Type string
	// Name renames the tool an ask toolset gives the model.
	Name string
	// verdict
	Required bool
	// shell
	Env        map[string]string
	Timeout    time.Duration // 0: the toolset's default
	WorkingDir string
	Shell      string
	// remote
	URL                string
	Tools              []RemoteTool
	Headers            map[string]string
	CallbackHost       string
	AllowResponseHosts []string

	Pos Pos
}

// RemoteTool is a tool declared in yaml and served by a remote tool server.
type RemoteTool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Permissions gate tool calls: deny wins over ask over allow.
type Permissions struct {
	Allow, Ask, Deny []string
}

// Agent returns the named agent, or the default one when name is empty:
// "root" if present, else the first.
func (c *Config) Agent(name string) *Agent {
	if name == "" {
		if a := c.Agent("root"); a != nil {
			return a
		}
		if len(c.Agents) > 0 {
			return c.Agents[0]
		}
		return nil
	}
	for _, a := range c.Agents {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// AgentNames lists the agents in file order.
func (c *Config) AgentNames() []string {
	names := make([]string, len(c.Agents))
	for i, a := range c.Agents {
		names[i] = a.Name
	}
	return names
}
