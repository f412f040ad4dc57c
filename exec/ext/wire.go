// Package ext is how hitl talks to hitl-ext, its companion program: the
// packages only some agent files need (the Gemini SDK, an OpenAPI parser)
// are linked into hitl-ext, not hitl, so that every other run (and every
// `hitl ask` in a hook) starts without paying for their initialization.
//
// hitl starts hitl-ext when an agent file first needs it, in the sandbox of
// a command nobody saw (no network, no writes, no credentials): hitl-ext
// reaches nothing itself. Its model requests come back to hitl as HTTP
// requests (a tunnel), which hitl sends through its own client, with the
// cassette, bounds and timeouts of every other provider; OpenAPI documents
// are read by hitl and handed over as bytes.
//
// The wire is frames on hitl-ext's stdin and stdout: a 4-byte big-endian
// length (of what follows), a type byte, a 4-byte id, the payload (JSON, or
// raw body bytes). A frame is at most MaxFrame bytes.
package ext

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Proto is the wire's version: hitl and hitl-ext of different versions
// refuse each other at the hello.
const Proto = 1

// MaxFrame bounds one frame (a turn's request or result, a body chunk).
const MaxFrame = 256 << 20

// ChunkSize is the largest body chunk sent.
const ChunkSize = 64 << 10

// Frame types.
const (
	// hitl-ext → hitl
	THello      byte = 'h' // Hello
	THTTP       byte = 'R' // HTTPRequest: a request to send
	THTTPCancel byte = 'X' // the request id is abandoned
	TDelta      byte = 'D' // a streamed chunk arrived (for a spinner)
	TTurnDone   byte = 'U' // TurnResult
	TOpenAPIOut byte = 'Q' // OpenAPIResult
	THTMLOut    byte = 'M' // HTMLResult

	// hitl → hitl-ext
	TOpenModel byte = 'O' // ModelConfig
	TTurn      byte = 'T' // exec.Request; answered by TTurnDone with the same id
	TCancel    byte = 'C' // the turn id is cancelled
	THead      byte = 'H' // HTTPHead: the response to request id
	TBody      byte = 'B' // raw bytes of request id's response body
	TBodyEnd   byte = 'E' // BodyEnd
	TOpenAPI   byte = 'P' // OpenAPIDoc
	THTML      byte = 'L' // HTMLPage
)

// Frame is one message.
type Frame struct {
	Type byte
	ID   uint32
	Data []byte
}

// Conn reads and writes frames; writes may come from any goroutine.
type Conn struct {
	r  *bufio.Reader
	mu sync.Mutex
	w  io.Writer
}

// NewConn is a connection reading r and writing w.
func NewConn(r io.Reader, w io.Writer) *Conn {
	return &Conn{r: bufio.NewReaderSize(r, 64<<10), w: w}
}

// Send writes one frame.
func (c *Conn) Send(t byte, id uint32, data []byte) error {
	if len(data)+5 > MaxFrame {
		return fmt.Errorf("ext: a frame of %d bytes is more than %d", len(data)+5, MaxFrame)
	}
	var h [9]byte
	binary.BigEndian.PutUint32(h[:4], uint32(len(data)+5))
	h[4] = t
	binary.BigEndian.PutUint32(h[5:], id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(h[:]); err != nil {
		return err
	}
	_, err := c.w.Write(data)
	return err
}

// SendJSON writes a frame whose payload is v as JSON.
func (c *Conn) SendJSON(t byte, id uint32, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Send(t, id, b)
}

// ErrFrame is a frame that breaks the wire's rules.
var ErrFrame = errors.New("ext: malformed frame")

// Read reads the next frame (one goroutine only). io.EOF is the other
// side gone between frames.
func (c *Conn) Read() (Frame, error) {
	var h [9]byte
	if _, err := io.ReadFull(c.r, h[:4]); err != nil {
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(h[:4])
	if n < 5 || n > MaxFrame {
		return Frame{}, fmt.Errorf("%w: length %d (5 to %d)", ErrFrame, n, MaxFrame)
	}
	if _, err := io.ReadFull(c.r, h[4:]); err != nil {
		return Frame{}, unexpected(err)
	}
	f := Frame{Type: h[4], ID: binary.BigEndian.Uint32(h[5:])}
	// Read the payload as it comes, so a length the peer never fills
	// costs what it sent, not what it claimed.
	var buf []byte
	if rest := int64(n) - 5; rest > 0 {
		b, err := io.ReadAll(io.LimitReader(c.r, rest))
		if err != nil {
			return Frame{}, err
		}
		if int64(len(b)) < rest {
			return Frame{}, unexpected(io.EOF)
		}
		buf = b
	}
	f.Data = buf
	return f, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Hello is hitl-ext's first frame.
type Hello struct {
	Proto   int    `json:"proto"`
	Version string `json:"version"`
}

// HTTPRequest is a request hitl-ext's client would send.
type HTTPRequest struct {
	Method string              `json:"method"`
	URL    string              `json:"url"`
	Header map[string][]string `json:"header"`
	Body   []byte              `json:"body,omitempty"`
}

// HTTPHead is the response's status and header (its body follows as TBody
// frames, then a TBodyEnd); Error instead is a request that failed.
type HTTPHead struct {
	Status int                 `json:"status"`
	Header map[string][]string `json:"header"`
	Error  string              `json:"error,omitempty"`
	Cut    bool                `json:"cut,omitempty"` // Error is a dropped connection
}

// BodyEnd ends a response body: Error is how its reading failed ("" at
// its end).
type BodyEnd struct {
	Error string `json:"error,omitempty"`
	Cut   bool   `json:"cut,omitempty"` // a dropped connection, a premature end
}

// ModelConfig opens the model hitl-ext runs (one per hitl-ext).
type ModelConfig struct {
	Provider string `json:"provider"`
	// Model is the agent file's model, as config.Model's exported fields.
	Model          json.RawMessage `json:"model"`
	APIKey         string          `json:"api_key,omitempty"`
	BaseURL        string          `json:"base_url"`
	MaxRetries     int             `json:"max_retries"`
	MaxRetryDelay  int64           `json:"max_retry_delay_ns"`
	TurnRetryDelay int64           `json:"turn_retry_delay_ns"`
	MaxTurnBytes   int64           `json:"max_turn_bytes"`
}

// TurnResult is a turn's end: its turn, or the error it ended with.
type TurnResult struct {
	Turn  json.RawMessage `json:"turn,omitempty"`
	Error *Error          `json:"error,omitempty"`
}

// Error is an error as hitl-ext met it: its text, and what kind it is, so
// that hitl returns the error type its callers look for.
type Error struct {
	Message string `json:"message"`
	// Kind: "api", "stream", "too_large", "cancelled", "" for another.
	Kind string `json:"kind,omitempty"`
	// Tunnel: a request's error, as hitl sent it, is in the chain (hitl
	// puts its own back: a cassette miss, a bound, a cancellation).
	Tunnel bool `json:"tunnel,omitempty"`

	Provider string `json:"provider,omitempty"`
	Status   int    `json:"status,omitempty"`
	Type     string `json:"type,omitempty"`
	Detail   string `json:"detail,omitempty"` // api: the provider's message
	Retries  int    `json:"retries,omitempty"`
	Cut      bool   `json:"cut,omitempty"`
	What     string `json:"what,omitempty"` // too_large
	Limit    int64  `json:"limit,omitempty"`
	Reached  bool   `json:"reached,omitempty"`
}

// OpenAPIDoc is an OpenAPI document to read.
type OpenAPIDoc struct {
	Spec string `json:"spec"` // where it came from (a URL or a path)
	Data []byte `json:"data"`
}

// OpenAPIResult is what the document describes, or why it could not be read.
type OpenAPIResult struct {
	Servers    []string    `json:"servers,omitempty"`
	Operations []Operation `json:"operations,omitempty"`
	Error      string      `json:"error,omitempty"`
}

// Operation is one operation of an OpenAPI document, as the openapi
// toolset needs it.
type Operation struct {
	Path        string      `json:"path"`
	Method      string      `json:"method"`
	OperationID string      `json:"operation_id,omitempty"`
	Summary     string      `json:"summary,omitempty"`
	Description string      `json:"description,omitempty"`
	Parameters  []Parameter `json:"parameters,omitempty"`
	// Body is the properties of its application/json request body.
	Body         map[string]map[string]any `json:"body,omitempty"`
	BodyRequired []string                  `json:"body_required,omitempty"`
}

// Parameter is one parameter of an operation: Schema is the property the
// tool's parameters give it.
type Parameter struct {
	Name        string         `json:"name"`
	In          string         `json:"in"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required,omitempty"`
	Schema      map[string]any `json:"schema"`
}

// HTMLPage is a page the fetch tool read, to render as Markdown or text.
type HTMLPage struct {
	Page     string `json:"page"`
	Markdown bool   `json:"markdown"`
}

// HTMLResult is the page rendered.
type HTMLResult struct {
	Text string `json:"text"`
}
