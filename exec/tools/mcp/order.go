package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
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

// maxNoted bounds the line a orderReader looks into: a longer one (a huge
// tool result) holds no form worth ordering, and is skipped unread.
const maxNoted = 1 << 20

// orderReader passes a server's bytes on unchanged, and notes the field
// order of each line (a stdio message, an event stream's data: line, a
// JSON reply) that holds a requestedSchema. It reads below the SDK, whose
// own connection types must stay as they are.
type orderReader struct {
	r     io.Reader
	order *fieldOrder
	line  []byte
	skip  bool // the current line is past maxNoted
}

func (o *orderReader) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	o.feed(p[:n])
	if err != nil && len(o.line) > 0 && !o.skip {
		o.note(o.line)
		o.line = o.line[:0]
	}
	return n, err
}

func (o *orderReader) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if !o.skip {
			if len(o.line)+len(part) > maxNoted {
				o.skip, o.line = true, o.line[:0]
			} else {
				o.line = append(o.line, part...)
			}
		}
		if i < 0 {
			return
		}
		if !o.skip {
			o.note(o.line)
		}
		o.line, o.skip = o.line[:0], false
		b = b[i+1:]
	}
}

func (o *orderReader) note(line []byte) {
	line = bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:"))
	o.order.note(json.RawMessage(line))
}

// orderBody notes the field order of an HTTP response's forms.
type orderBody struct {
	io.ReadCloser
	r *orderReader
}

func (b *orderBody) Read(p []byte) (int, error) { return b.r.Read(p) }

// orderTransport notes the field order of the forms in every response.
type orderTransport struct {
	base  http.RoundTripper
	order *fieldOrder
}

func (t *orderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	resp.Body = &orderBody{ReadCloser: resp.Body, r: &orderReader{r: resp.Body, order: t.order}}
	return resp, nil
}
