// Package config loads and validates agent.yaml files: a compatible subset of
// docker cagent's format (see DESIGN §7).
package config

import (
	"encoding/json"
	"gopkg.in/yaml.v3"
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
	Name string // key under models:, or the inline "provider/model" text
	// Provider is as written: openai | anthropic | ollama | script, or an
	// OpenAI-compatible preset (dmr, mistral, xai, nebius, requesty,
	// minimax; see Presets).
	Provider string
	// API is the client that speaks to the provider: "openai" for openai,
	// the presets and providers: entries of api_type openai_chatcompletions,
	// "openai_responses" for the Responses API, else Provider.
	API   string
	Model string
	// BaseURL is base_url, or for a preset provider its endpoint.
	BaseURL string
	// TokenKey is token_key, or for a preset provider its key variable
	// ("" for dmr, which takes no key).
	TokenKey string
	// Optional sampling settings; nil means "not set, send nothing".
	MaxTokens      *int64
	Temperature    *float64
	TopP           *float64
	ThinkingBudget *ThinkingBudget
	// FrequencyPenalty and PresencePenalty (-2 to 2) are sent as set.
	FrequencyPenalty *float64
	PresencePenalty  *float64
	// ProviderOpts are the provider_opts hitl implements.
	ProviderOpts ProviderOpts
	// Custom: Provider names an entry of the file's providers: map.
	Custom bool
	// Alloy, when set, are the models that take turns (cagent's alloy
	// model, "a,b"); Provider and API are then "alloy".
	Alloy []*Model
	// Fallback is the agent's fallback: models tried when this one fails.
	Fallback *Fallback
	// Routing sends a turn to the route whose examples match the last user
	// message best (cagent's rule-based router); this model otherwise.
	Routing   []Route
	routeRefs []routeRef
	routing   bool // its routes are being resolved
	// Auto, for model: auto, says why it is this model ("OPENAI_API_KEY is
	// set").
	Auto     string
	alloyRef string // the references of an alloy model of models:
	// Script is the script provider's list of assistant turns.
	Script []ScriptEntry
	Pos    Pos
}

// ThinkingBudget is an effort word (minimal|low|medium|high), a number of
// tokens, or thinking turned off (none, or 0). Tokens -1 asks the provider
// for its dynamic budget (cagent's Gemini form; OpenAI and Anthropic send
// nothing for it).
type ThinkingBudget struct {
	Effort string
	Tokens int64
	// Disabled is thinking_budget: none or 0: send no thinking settings.
	Disabled bool
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
	// CommandSegments are the commands holding tool calls, by name.
	CommandSegments map[string][]Segment
	// RAG are the rag entries whose tools the agent gets.
	RAG []*RAG
	// Hooks are cagent's hooks: commands run at points of the agent's run.
	Hooks              *Hooks
	Name               string
	Model              *Model
	Description        string
	Instruction        string
	MaxIterations      int // 0: not set
	AddDate            bool
	AddEnvironmentInfo bool
	WelcomeMessage     string
	// Commands maps a command name to the instruction it sends (${VAR}
	// already expanded; ${args}, ${args[N]} and $N left for RenderCommand).
	Commands map[string]string
	// CommandInfo holds every command with its description, in file order.
	CommandInfo []Command
	// PromptFiles are add_prompt_files resolved against the agent file's
	// directory; each existed when the file was loaded. The run appends
	// their contents to the system prompt, in this order.
	PromptFiles []string
	Toolsets    []*Toolset
	// SubAgents are the agents transfer_task may give a task to, Handoffs
	// those handoff may hand the conversation to (DESIGN §13); each names
	// an agent of the file.
	SubAgents []AgentRef
	Handoffs  []AgentRef
	// StructuredOutput, when set, is the shape of the agent's final
	// answer (cagent's structured_output): asked of the model where the
	// provider can, and checked before the run succeeds.
	StructuredOutput *StructuredOutput
	// MissingPromptFiles are add_prompt_files found nowhere: they add
	// nothing (cagent skips them silently; hitl validate notes them).
	MissingPromptFiles []AgentRef
	// Skills is cagent's skills: true (or a list of sources, all
	// "local"): the run looks for SKILL.md files in the home directory
	// and the project (exec/tools/skills) and gives the model read_skill.
	// SkillsPos is where the key is.
	Skills    bool
	SkillsPos Pos
	Pos       Pos
}

// StructuredOutput is an agent's structured_output.
type StructuredOutput struct {
	Name        string
	Description string
	Schema      json.RawMessage
	Strict      bool
}

// AgentRef is an agent named in sub_agents or handoffs, where it is named.
type AgentRef struct {
	Name string
	Pos  Pos
}

// Command is one of an agent's commands (hitl exec AGENT /NAME).
type Command struct {
	Name        string
	Description string
	Instruction string
	// Segments are the instruction cut at its tool calls (nil: none).
	Segments []Segment
	Pos      Pos
}

// Toolset is one entry of an agent's toolsets:. Which fields apply depends on
// Type; the loader rejects keys that do not belong to the type.
type Toolset struct {
	Type string
	// Model (cagent's toolset model:) is the model of the turn that reads
	// this toolset's results; ModelRef is the reference as written.
	Model    *Model
	ModelRef string
	// Models are a model_picker's models (PickRefs: as written, the
	// values change_model takes).
	Models   []*Model
	PickRefs []string
	// modelNode, pickNodes: resolved once the agent's models are known.
	modelNode *yaml.Node
	pickNodes []*yaml.Node
	// API is an api toolset's api_config.
	API *APIConfig
	// Instruction, when set, replaces the toolset's own guidance in the
	// system prompt; {ORIGINAL_INSTRUCTIONS} in it stands for that
	// guidance (cagent's toolset instruction).
	Instruction string
	// Name renames the tool an ask toolset gives the model; for mcp it is
	// the name: as written (Server is the resolved server name).
	Name string
	// Filter is tools: on a built-in or mcp toolset: only these of its
	// tools are given to the model (nil: all).
	Filter []string
	// Toon (cagent's toon:, any toolset) is the pattern of the names of
	// the tools whose JSON object results the model gets as TOON ("":
	// none), checked by Checks.ToolNames.
	Toon string
	// DeferAll and DeferTools are cagent's defer: (any toolset): all its
	// tools, or those named, are not offered to the model until it
	// activates them with add_tool. DeferPos is where each of DeferTools
	// is written.
	DeferAll   bool
	DeferTools []string
	DeferPos   []Pos
	// verdict
	Required bool
	// shell, mcp (stdio), script: extra environment, ${VAR} expanded.
	Env map[string]string
	// shell, mcp (one tool call), fetch (one request), remote; 0: the
	// toolset's default.
	Timeout    time.Duration
	WorkingDir string
	Shell      string
	// remote; mcp remote: URL and Headers too (${VAR} expanded).
	URL                string
	Tools              []RemoteTool
	Headers            map[string]string
	CallbackHost       string
	AllowResponseHosts []string

	// mcp: exactly one of Command (stdio), URL (remote) or Docker is set
	// (ToolNames of an mcp toolset is its tools: filter, checked against the
	// other toolsets' names; the rest are known when the server answers)
	// once a ref: to mcps: is resolved.
	Server  string   // the server's name: name:, else the mcps key or ref, else the command's base name
	Command string   // stdio server command
	Args    []string // its arguments
	// Transport is the remote transport: "streamable" (default) or "sse".
	Transport string
	// Docker is NAME of ref: docker:NAME: the server runs through Docker's
	// MCP gateway (docker mcp gateway run --servers NAME).
	Docker string
	// Version is cagent's package reference (owner/repo[@version]) of a
	// stdio server's Command: hitl installs nothing, but runs the program
	// cagent installed (DOCKER_AGENT_TOOLS_DIR, ~/.cagent/tools) and
	// otherwise names the package to install. "false" or "off": PATH only.
	Version string
	// GatewayConfig is config: of a docker:NAME server, handed to Docker's
	// MCP gateway as the file {NAME: config} (--config).
	GatewayConfig json.RawMessage

	// filesystem
	IgnoreVCS   bool       // ignore_vcs, default true
	PostEdit    []PostEdit // post_edit
	AllowedDirs []string   // allowed_directories (hitl's): paths besides the working directory, ${VAR} expanded
	// todo
	Shared bool
	// memory: the store's path as written (${VAR} expanded); "" = default.
	Path string
	// script: the named commands of its shell: map, in file order.
	Scripts []ScriptCommand

	Pos Pos
}

// PostEdit is a filesystem post_edit entry: after a write or edit of a file
// matching the glob Path, Cmd runs (with $path set to the file).
type PostEdit struct {
	Path string
	Cmd  string
}

// ScriptCommand is one command of a script toolset: a tool named Name that
// runs Cmd, with the model's arguments as environment variables.
type ScriptCommand struct {
	Name        string
	Description string
	Cmd         string
	// Args is the JSON object of the arguments' JSON schemas (cagent's
	// args:, passed as "properties"; a property without type is a string).
	Args json.RawMessage
	// ArgNames are the keys of Args, sorted.
	ArgNames []string
	// Required lists the required arguments (all of them when not given).
	Required   []string
	Env        map[string]string
	WorkingDir string
	Pos        Pos
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
	// Network are the rules (shell:cmd=GLOB) whose commands run unasked
	// keep the network (DESIGN §15).
	Network []string
	// DenyRead are the paths (as written: absolute, ~/..., or relative to
	// the agent file) a command nobody saw cannot read.
	DenyRead []string
	// Sandbox is permissions.sandbox: "" (auto), or one of SandboxModes.
	Sandbox    string
	SandboxPos Pos
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
