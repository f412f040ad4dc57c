package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// fieldOrder keeps the order in which a server wrote the fields of its
// elicitation forms. The SDK hands a requested schema over decoded into a
// map, which forgets it; a person should see the fields in the server's
// order (server-everything asks name, then email, then age…), not
// alphabetically. The connection notes each requestedSchema it reads, keyed
// by the schema's canonical JSON (what marshalling the SDK's map gives).
type fieldOrder struct {
	mu    sync.Mutex
	order map[string][]string
	keys  []string // oldest first, for the bound
}

// maxOrders bounds the schemas remembered: a form is asked soon after its
// message arrives.
const maxOrders = 64

// note records the property order of every requestedSchema in raw, a
// message's params or result.
func (o *fieldOrder) note(raw json.RawMessage) {
	if !bytes.Contains(raw, []byte(`"requestedSchema"`)) {
		return
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := d.Token()
		if err != nil {
			return
		}
		if tok != "requestedSchema" {
			continue
		}
		var schema json.RawMessage
		if d.Decode(&schema) != nil {
			return
		}
		o.add(schema)
	}
}

func (o *fieldOrder) add(schema json.RawMessage) {
	names := propertyNames(schema)
	if len(names) < 2 {
		return
	}
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return
	}
	key, err := json.Marshal(v)
	if err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.order == nil {
		o.order = map[string][]string{}
	}
	if _, ok := o.order[string(key)]; !ok {
		o.keys = append(o.keys, string(key))
		if len(o.keys) > maxOrders {
			delete(o.order, o.keys[0])
			o.keys = o.keys[1:]
		}
	}
	o.order[string(key)] = names
}

// propertyNames are the keys of schema's top-level "properties", in order.
func propertyNames(schema json.RawMessage) []string {
	d := json.NewDecoder(bytes.NewReader(schema))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return nil
		}
		if key != "properties" {
			var skip json.RawMessage
			if d.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
			return nil
		}
		var names []string
		for d.More() {
			name, err := d.Token()
			if err != nil {
				return nil
			}
			s, _ := name.(string)
			names = append(names, s)
			var skip json.RawMessage
			if d.Decode(&skip) != nil {
				return nil
			}
		}
		return names
	}
	return nil
}

// schema is the requested schema as JSON, its properties in the order the
// server wrote them when that was noted.
func (o *fieldOrder) schema(requested any) (json.RawMessage, error) {
	raw, err := json.Marshal(requested)
	if err != nil || o == nil {
		return raw, err
	}
	o.mu.Lock()
	names := o.order[string(raw)]
	o.mu.Unlock()
	if names == nil {
		return raw, nil
	}
	var top map[string]json.RawMessage
	var props map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || json.Unmarshal(top["properties"], &props) != nil || len(props) != len(names) {
		return raw, nil
	}
	var b bytes.Buffer
	b.WriteString(`{"properties":{`)
	for i, n := range names {
		v, ok := props[n]
		if !ok {
			return raw, nil
		}
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	for k, v := range top {
		if k == "properties" {
			continue
		}
		kb, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// orderTransport notes the field order of what its connections read.
type orderTransport struct {
	sdk.Transport
	order *fieldOrder
}

func (t *orderTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &orderConn{Connection: c, order: t.order}, nil
}

type orderConn struct {
	sdk.Connection
	order *fieldOrder
}

func (c *orderConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	switch m := msg.(type) {
	case *jsonrpc.Request:
		c.order.note(m.Params)
	case *jsonrpc.Response:
		c.order.note(m.Result)
	}
	return msg, err
}
