// Package cassette records the HTTP traffic of model providers to a file and
// replays it offline (hitl exec --record FILE / --replay FILE), using go-vcr
// (gopkg.in/dnaeon/go-vcr.v4) at the transport.
//
// Recording: every 2xx exchange is kept, in order; non-2xx answers (a 429
// before a retry, a 401) are not. Only an allow-list of headers is written
// (Content-Type, Accept, Anthropic-Version, Anthropic-Beta): never
// Authorization, x-api-key, cookies or any other credential. URLs lose their
// query. The file (mode 0600) is rewritten after each exchange and by Save
// and Close, so it is complete whatever way the run ends. It also holds the
// time the recording started: Now returns it, frozen, in both modes, so an
// agent with add_date sends the same system prompt when replayed on another
// day.
//
// Replaying: requests are matched in order on method, path and body (JSON
// bodies compared as JSON); nothing goes to the network and no key is
// needed. The Nth request that finds no recorded exchange, or a different
// one, fails with a *MissError ("the cassette has no turn N"). Providers turn
// their SDK retries off when replaying, so turn N is request N.
//
// Resuming a replayed run (hitl resume --replay FILE): the run goes on from
// the middle of the recording. Seek makes the first request find its turn
// (the first exchange whose request is that one: the conversation so far
// is the recorded one); the turns before it are passed over, and from there
// on requests are matched in order again.
//
// Bounds: a response larger than MaxResponse is not recorded (go-vcr reads
// each response whole to record it; the request fails with a
// *provider.TooLargeError), and a cassette file larger than MaxFile is not
// read.
//
// Typical use, by the CLI:
//
//	c, err := cassette.Record(path, nil) // or cassette.Replay(path)
//	if err != nil { ... }
//	defer c.Close()
//	m, err := model.New(cfg, model.Options{Cassette: c, ...})
package cassette

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v4"
	vcr "gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"
	"gopkg.in/dnaeon/go-vcr.v4/pkg/recorder"

	"github.com/hitl-dev/hitl/exec/model/internal/provider"
)

// Mode is what a Cassette does.
type Mode int

const (
	ModeRecord Mode = iota + 1
	ModeReplay
)

// RequestHeaders and ResponseHeaders are the headers a cassette keeps; all
// others are dropped before the file is written.
var (
	RequestHeaders  = []string{"Content-Type", "Accept", "Anthropic-Version", "Anthropic-Beta"}
	ResponseHeaders = []string{"Content-Type"}
)

// Bounds of what a cassette holds in memory (variables for tests).
var (
	// MaxResponse bounds one recorded response body.
	MaxResponse int64 = 64 << 20
	// MaxFile bounds the cassette file that is replayed.
	MaxFile int64 = 256 << 20
)

// MissError is a replayed request the cassette has no answer for.
type MissError struct {
	Turn    int  // 1-based: the Nth request of the run
	Have    int  // exchanges in the cassette
	Differs bool // the Nth exchange exists but its request is different
	// Resumed: the request of a resumed run (Seek) is none of the
	// recorded ones, so no turn is the Nth.
	Resumed bool
}

func (e *MissError) Error() string {
	if e.Resumed {
		return fmt.Sprintf("the cassette has no turn for the resumed run's request: none of its %d recorded requests is this one (the agent, its tools, the model settings or the conversation changed)", e.Have)
	}
	if e.Differs {
		return fmt.Sprintf("the cassette has no turn %d: the request differs from the recorded one (the agent, its tools, the model settings or the conversation changed)", e.Turn)
	}
	return fmt.Sprintf("the cassette has no turn %d: it holds %d", e.Turn, e.Have)
}

// Cassette is an http.RoundTripper that records to, or replays from, a file.
type Cassette struct {
	path string
	mode Mode
	rec  *recorder.Recorder
	now  time.Time

	mu       sync.Mutex
	n        int  // requests seen
	differs  bool // the last miss was a mismatch, not the end
	seeking  bool // Seek: the next request may match any later turn
	skipped  int  // turns passed over by Seek
	saveErr  error
	closed   bool
	client   *http.Client
	recorded int
	have     int // exchanges in a replayed cassette
}

// Record starts a recording to path (replacing any file there), sending
// requests on through real (nil: a clone of http.DefaultTransport).
func Record(path string, real http.RoundTripper) (*Cassette, error) {
	return Open(path, ModeRecord, real)
}

// Replay loads the cassette at path for replaying.
func Replay(path string) (*Cassette, error) {
	return Open(path, ModeReplay, nil)
}

// Open opens a cassette in mode. real is only used when recording.
func Open(path string, mode Mode, real http.RoundTripper) (*Cassette, error) {
	if path == "" {
		return nil, errors.New("cassette: no file named")
	}
	c := &Cassette{path: path, mode: mode}
	opts := []recorder.Option{
		recorder.WithFS(fileFS{path: path}),
		recorder.WithSkipRequestLatency(true),
		recorder.WithMatcher(c.matcher()),
		recorder.WithMarshalFunc(c.marshal),
	}
	switch mode {
	case ModeRecord:
		if real == nil {
			real = http.DefaultTransport.(*http.Transport).Clone()
		}
		real = capResponses{real}
		// Fail now, not at the end of the run, if the file cannot be written.
		if err := writeFile(path, nil); err != nil {
			return nil, fmt.Errorf("cassette: %w", err)
		}
		c.now = time.Now().UTC().Truncate(time.Second)
		opts = append(opts,
			recorder.WithMode(recorder.ModeRecordOnly),
			recorder.WithRealTransport(real),
			recorder.WithHook(discardFailures, recorder.AfterCaptureHook),
			recorder.WithHook(scrub, recorder.BeforeSaveHook),
		)
	case ModeReplay:
		data, err := readFile(path)
		if err != nil {
			return nil, fmt.Errorf("cassette: %w", err)
		}
		var meta struct {
			RecordedAt   time.Time `yaml:"recorded_at"`
			Interactions []any     `yaml:"interactions"`
		}
		if err := yaml.Unmarshal(data, &meta); err != nil {
			return nil, fmt.Errorf("cassette %s: %w", path, err)
		}
		c.now, c.have = meta.RecordedAt, len(meta.Interactions)
		opts = append(opts,
			recorder.WithMode(recorder.ModeReplayOnly),
			recorder.WithRealTransport(noNetwork{}),
		)
	default:
		return nil, fmt.Errorf("cassette: unknown mode %d", mode)
	}
	rec, err := recorder.New(path, opts...)
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", path, err)
	}
	c.rec = rec
	c.client = &http.Client{Transport: c}
	if mode == ModeRecord {
		// An empty but valid cassette from the start.
		if err := c.Save(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Path is the cassette file.
func (c *Cassette) Path() string { return c.path }

// Replaying reports whether c replays (no network, no key, no retries).
func (c *Cassette) Replaying() bool { return c.mode == ModeReplay }

// Now is the frozen clock: the time the recording started. It is the zero
// time for a replayed cassette that does not say when it was recorded.
func (c *Cassette) Now() time.Time { return c.now }

// Client is an *http.Client sending through c, shared by every turn.
func (c *Cassette) Client() *http.Client { return c.client }

// Seek makes the next request find its turn anywhere in a replayed
// cassette, passing over the turns before it (a resumed run goes on from
// the middle of the recording). It does nothing when recording.
func (c *Cassette) Seek() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seeking = c.mode == ModeReplay
}

// Turns is the number of requests that went through c so far.
func (c *Cassette) Turns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// RoundTrip implements http.RoundTripper.
func (c *Cassette) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("cassette: closed")
	}
	c.n++
	c.differs = false
	res, err := c.rec.RoundTrip(req)
	if err != nil {
		if errors.Is(err, vcr.ErrInteractionNotFound) {
			if req.Body != nil {
				req.Body.Close()
			}
			miss := &MissError{Turn: c.skipped + c.n, Have: c.have, Differs: c.differs, Resumed: c.seeking}
			// A request that found nothing is not a turn: a fallback model
			// asked next may find this one (a failed turn was not recorded).
			c.n--
			return nil, miss
		}
		return nil, err
	}
	if c.mode == ModeRecord {
		if res.StatusCode/100 == 2 {
			c.recorded++
		} else {
			// Not recorded: a request retried does not count as a turn.
			c.n--
		}
		if err := c.save(); err != nil && c.saveErr == nil {
			c.saveErr = err
		}
	}
	return res, nil
}

// Save writes the recording so far (a no-op when replaying).
func (c *Cassette) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.save(); err != nil {
		return err
	}
	return c.saveErr
}

func (c *Cassette) save() error {
	if c.mode != ModeRecord {
		return nil
	}
	if err := c.rec.Stop(); err != nil {
		return fmt.Errorf("cassette %s: %w", c.path, err)
	}
	return nil
}

// Close saves the recording and stops c. It is safe to call more than once.
func (c *Cassette) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.saveErr
	}
	err := c.save()
	c.closed = true
	if err != nil {
		return err
	}
	return c.saveErr
}

// matcher matches a request with the next unplayed exchange only, on
// method, path and body. go-vcr offers a request the unplayed exchanges in
// order: the turns Seek passed over come first and are refused, then the
// next one is compared and any after it refused. While seeking, every
// exchange is compared until one matches; those before it are passed over.
// It runs under c.mu (RoundTrip).
func (c *Cassette) matcher() recorder.MatcherFunc {
	var (
		last    *http.Request
		offered int  // exchanges offered to last so far
		decided bool // last was compared with its exchange
	)
	return func(r *http.Request, i vcr.Request) bool {
		if r != last {
			last, offered, decided = r, 0, false
		}
		offered++
		if decided || offered <= c.skipped {
			return false
		}
		ok := Match(r, i)
		if !ok {
			c.differs = true
		}
		if c.seeking {
			if ok {
				c.seeking, c.differs = false, false
				c.skipped = offered - 1
			}
			return ok
		}
		decided = true
		return ok
	}
}

// Match reports whether r is the recorded request i: same method, same path,
// same body (equal as JSON when both are JSON).
func Match(r *http.Request, i vcr.Request) bool {
	if r.Method != i.Method {
		return false
	}
	u, err := url.Parse(i.URL)
	if err != nil || strings.TrimRight(u.Path, "/") != strings.TrimRight(r.URL.Path, "/") {
		return false
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		body, err = io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return false
		}
	}
	return sameBody(body, []byte(i.Body))
}

func sameBody(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// discardFailures keeps non-2xx exchanges out of the file.
func discardFailures(i *vcr.Interaction) error {
	if i.Response.Code/100 != 2 {
		i.DiscardOnSave = true
	}
	return nil
}

// scrub keeps only the allowed headers and drops what could hold a secret
// or vary between runs.
func scrub(i *vcr.Interaction) error {
	i.Request.Headers = keep(i.Request.Headers, RequestHeaders)
	i.Response.Headers = keep(i.Response.Headers, ResponseHeaders)
	i.Request.Form = nil
	i.Request.RemoteAddr = ""
	i.Request.RequestURI = ""
	i.Request.Trailer = nil
	i.Response.Trailer = nil
	i.Response.Duration = 0
	if u, err := url.Parse(i.Request.URL); err == nil {
		u.RawQuery, u.User, u.Fragment = "", nil, ""
		i.Request.URL = u.String()
	} else {
		i.Request.URL = ""
	}
	return nil
}

func keep(h http.Header, names []string) http.Header {
	out := http.Header{}
	for _, n := range names {
		if v := h.Values(n); len(v) > 0 {
			out[http.CanonicalHeaderKey(n)] = append([]string(nil), v...)
		}
	}
	return out
}

// file is the cassette's layout on disk: go-vcr's, plus when it was recorded.
type file struct {
	Version      int                `yaml:"version"`
	RecordedAt   time.Time          `yaml:"recorded_at"`
	Interactions []*vcr.Interaction `yaml:"interactions"`
}

func (c *Cassette) marshal(v any) ([]byte, error) {
	vc, ok := v.(*vcr.Cassette)
	if !ok {
		return yaml.Marshal(v)
	}
	return yaml.Marshal(file{Version: vc.Version, RecordedAt: c.now, Interactions: vc.Interactions})
}

// fileFS stores the cassette at exactly path (go-vcr appends ".yaml" to a
// cassette's name), with mode 0600, replaced atomically.
type fileFS struct{ path string }

func (f fileFS) name(n string) string {
	if n == f.path+".yaml" {
		return f.path
	}
	return n
}

func (f fileFS) ReadFile(n string) ([]byte, error) { return readFile(f.name(n)) }

// readFile reads the file at path, refusing one larger than MaxFile.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > MaxFile {
		return nil, fmt.Errorf("%s is larger than %s", path, provider.Size(MaxFile))
	}
	return data, nil
}

// capResponses bounds the response bodies a recording reads whole.
type capResponses struct{ real http.RoundTripper }

func (c capResponses) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.real.RoundTrip(req)
	if err == nil && res.Body != nil {
		res.Body = provider.CapBody(res.Body, MaxResponse, "a response to record in the cassette")
	}
	return res, err
}

func (f fileFS) WriteFile(n string, data []byte) error { return writeFile(f.name(n), data) }

func (f fileFS) IsFileExists(n string) bool {
	_, err := os.Stat(f.name(n))
	return err == nil
}

func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".cassette-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if data == nil {
		return nil // only checking that path's directory is writable
	}
	return os.Rename(tmp.Name(), path)
}

// noNetwork is the transport of a replaying cassette.
type noNetwork struct{}

func (noNetwork) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("cassette: replaying, no network")
}
