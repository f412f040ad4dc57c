package config

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// APIConfig is an api toolset's api_config (cagent's): one tool calling an
// HTTP endpoint.
type APIConfig struct {
	Name         string
	Instruction  string
	Endpoint     string
	Method       string
	Headers      map[string]string
	Args         json.RawMessage // JSON Schema properties
	Required     []string
	OutputSchema json.RawMessage
	Pos          Pos
}

var apiConfigKeys = []string{"name", "instruction", "endpoint", "method", "headers", "args", "required", "output_schema"}

func (l *loader) apiConfig(n *yaml.Node) *APIConfig {
	if !l.want(n, yaml.MappingNode, "a mapping with name, endpoint and method") {
		return nil
	}
	c := &APIConfig{Pos: pos(n), Method: "GET"}
	var endpointNode, methodNode *yaml.Node
	l.eachKey(n, "api_config key", apiConfigKeys, nil, func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			c.Name = l.str(v)
		case "instruction":
			c.Instruction = l.str(v)
		case "endpoint":
			// ${name} are the call's arguments, put in at call time.
			c.Endpoint = l.str(v)
			endpointNode = v
		case "method":
			c.Method = strings.ToUpper(l.str(v))
			methodNode = v
		case "headers":
			c.Headers = l.stringMap(v, true)
		case "args":
			c.Args = l.jsonValue(v)
		case "required":
			c.Required = l.strings(v)
		case "output_schema":
			c.OutputSchema = l.jsonValue(v)
		}
	})
	switch {
	case c.Name == "":
		l.errorf(n, "api_config needs a name (the tool's name)")
	case c.Method != "GET" && c.Method != "POST":
		l.errorf(methodNode, "api_config method %q: expected GET or POST", c.Method)
	case endpointNode == nil:
		l.errorf(n, "api_config needs an endpoint (an http(s) URL)")
	default:
		l.checkEndpoint(endpointNode, c.Endpoint)
	}
	return c
}

var argPlace = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`) })

// checkEndpoint: an http(s) URL with a host; a ${name} (an argument) may
// stand in the path or the query, never before: an argument must never
// choose where the request goes.
func (l *loader) checkEndpoint(n *yaml.Node, endpoint string) {
	scheme, rest, ok := strings.Cut(endpoint, "://")
	host, _, _ := strings.Cut(rest, "/")
	host, _, _ = strings.Cut(host, "?")
	u, err := url.Parse(argPlace().ReplaceAllString(endpoint, "x"))
	switch {
	case !ok || (scheme != "http" && scheme != "https") || err != nil || u.Host == "":
		l.errorf(n, "api_config endpoint %q: expected an http(s) URL with a host", endpoint)
	case strings.Contains(scheme+host, "$"):
		l.errorf(n, "api_config endpoint %q: a ${name} may stand in the path or the query, never in the scheme or the host", endpoint)
	}
}
