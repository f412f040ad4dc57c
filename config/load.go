package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/hitl-dev/hitl/internal/yamlsize"
	"gopkg.in/yaml.v3"
)

// Top-level keys, and cagent's that hitl does not implement: named so the
// error can say "not supported by hitl" instead of "unknown".
var (
	topKeys            = []string{"version", "models", "agents", "permissions", "metadata", "mcps", "providers", "rag"}
	unsupportedTopKeys = []string{"env"}
	// Versions are the config versions cagent defines (pkg/config/v0..v6
	// and latest).
	Versions = []string{"0", "1", "2", "3", "4", "5", "6", "7"}
)

// MaxFile is the most bytes an agent file may hold, and the most any of its
// values may expand to through YAML aliases (DESIGN §1: bounded).
const MaxFile = 4 << 20

// Load reads and validates the agent file at path. ${VAR} references are
// resolved with lookup (os.LookupEnv when nil). The error, when not nil, is
// Errors (every problem of the file) or a read error. A file larger than
// MaxFile (or a device that never ends) is refused.
func Load(path string, lookup func(string) (string, bool), checks Checks) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, Errors{{File: path, Msg: "cannot read the agent file: " + err.Error()}}
	}
	if len(data) > MaxFile {
		return nil, Errors{{File: path, Msg: fmt.Sprintf("the agent file is larger than %d MiB", MaxFile>>20)}}
	}
	return Parse(path, data, lookup, checks)
}

// readFile reads at most MaxFile+1 bytes of path.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFile+1))
}

// Parse validates data as the agent file named path.
func Parse(path string, data []byte, lookup func(string) (string, bool), checks Checks) (*Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	sum := sha256.Sum256(data)
	l := &loader{file: path, lookup: lookup, checks: checks, cfg: &Config{Path: path, SHA256: hex.EncodeToString(sum[:])}}
	l.parse(data)
	if len(l.errs) > 0 {
		return nil, l.errs.sorted()
	}
	return l.cfg, nil
}

type loader struct {
	file   string
	lookup func(string) (string, bool)
	checks Checks
	cfg    *Config
	errs   Errors
	// mcpDefs is the top-level mcps: map; inMCPDef names the definition
	// being read.
	mcpDefs  map[string]*mcpDef
	inMCPDef string
	// providerDefs is the top-level providers: map.
	providerDefs map[string]*ProviderDef
	ragDefs      map[string]*RAG
}

func pos(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

func (l *loader) errorf(n *yaml.Node, format string, args ...any) {
	p := Pos{1, 1}
	if n != nil {
		p = pos(n)
	}
	l.errs = append(l.errs, &Error{File: l.file, Pos: p, Msg: fmt.Sprintf(format, args...)})
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

func (l *loader) parse(data []byte) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := 1
		if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = yamlLine().ReplaceAllString(msg, "")
		msg = strings.TrimPrefix(strings.TrimSpace(msg), ": ")
		l.errs = append(l.errs, &Error{File: l.file, Pos: Pos{line, 1}, Msg: "not valid YAML: " + msg})
		return
	}
	if len(doc.Content) == 0 {
		l.errorf(nil, "the file is empty: expected a mapping with agents:")
		return
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		l.errorf(root, "expected a mapping with agents:, got %s", kindName(root))
		return
	}
	var agentsNode, modelsNode, mcpsNode, permissionsNode, ragNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k, v := root.Content[i], root.Content[i+1]; k.Value == "providers" {
			l.providerDefs = l.providers(v)
		}
	}
	l.eachKey(root, "top-level key", topKeys, unsupportedTopKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "version":
			l.cfg.Version = l.scalar(v)
			if v.Kind == yaml.ScalarNode && !contains(Versions, l.cfg.Version) {
				l.errorf(v, "version %q is not a config version cagent defines; known versions: %s", l.cfg.Version, strings.Join(Versions, ", "))
			}
		case "models":
			modelsNode = v
		case "agents":
			agentsNode = v
		case "mcps":
			mcpsNode = v
		case "rag":
			ragNode = v
		case "permissions":
			permissionsNode = v
		case "metadata":
			if err := yamlsize.Check(v, MaxFile); err != nil {
				l.errorf(v, "%v", err)
				return
			}
			var m any
			_ = v.Decode(&m)
			l.cfg.Metadata = m
		}
	})
	models := map[string]*Model{}
	if modelsNode != nil && l.want(modelsNode, yaml.MappingNode, "a mapping of model names") {
		for i := 0; i+1 < len(modelsNode.Content); i += 2 {
			k, v := modelsNode.Content[i], modelsNode.Content[i+1]
			m := l.model(k.Value, v)
			models[k.Value] = m
			l.cfg.Models = append(l.cfg.Models, m)
		}
	}
	if mcpsNode != nil {
		l.mcps(mcpsNode)
	}
	if ragNode != nil {
		l.ragDefs = l.rags(ragNode, models)
	}
	if agentsNode == nil {
		l.errorf(root, "no agents: an agent file needs at least one agent under agents:")
		return
	}
	if !l.want(agentsNode, yaml.MappingNode, "a mapping of agent names") {
		return
	}
	if len(agentsNode.Content) == 0 {
		l.errorf(agentsNode, "agents: is empty; define at least one agent")
	}
	for i := 0; i+1 < len(agentsNode.Content); i += 2 {
		k, v := agentsNode.Content[i], agentsNode.Content[i+1]
		l.cfg.Agents = append(l.cfg.Agents, l.agent(k, v, models))
	}
	l.checkTeam()
	if permissionsNode != nil {
		l.permissions(permissionsNode)
	}
}
