package model_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/internal/fakellm"
)

// foreverServer answers every request with status, head, then event(i) for
// i = 0, 1, … until the client goes away (or, as a safety net for a failing
// test, 2 GiB were sent). It records how many bytes it wrote and when its
// handler ended.
type foreverServer struct {
	*httptest.Server
	requests atomic.Int32
	written  atomic.Int64
	done     chan struct{}
}

func newForeverServer(t *testing.T, status int, contentType, head string, event func(i int) string) *foreverServer {
	t.Helper()
	s := &foreverServer{done: make(chan struct{}, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { s.done <- struct{}{} }()
		s.requests.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fl := w.(http.Flusher)
		write := func(p string) bool {
			n, err := io.WriteString(w, p)
			s.written.Add(int64(n))
			return err == nil && s.written.Load() < 2<<30
		}
		if !write(head) {
			return
		}
		for i := 0; ; i++ {
			if !write(event(i)) || r.Context().Err() != nil {
				return
			}
			if i%64 == 0 {
				fl.Flush()
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

const (
	oaChunk = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":null}]}` + "\n\n"
	anStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
)

func anEvent(typ, data string) string {
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q,%s}\n\n", typ, typ, data)
}

func anBlock(i int, block string) string {
	return anEvent("content_block_start", fmt.Sprintf(`"index":%d,"content_block":%s`, i, block))
}

func anDelta(i int, delta string) string {
	return anEvent("content_block_delta", fmt.Sprintf(`"index":%d,"delta":%s`, i, delta))
}

var kib = strings.Repeat("x", 1024)

// TestTurnBound: a server that streams forever, in each provider's real wire
// format and in every shape a turn can grow (text, thinking, tool arguments,
// tool names, ever more tool calls or blocks, one endless line or event, an
// endless error body), ends the turn with a *TooLargeError saying what
// passed which bound, after one request (no retry), with the connection
// closed (the server's handler ends) and a bounded number of bytes read.
func TestTurnBound(t *testing.T) {
	const limit = 64 << 10
	sse := "text/event-stream"
	cases := []struct {
		provider string
		name     string
		status   int
		head     string
		event    func(i int) string
		want     string
	}{
		{"openai", "text deltas", 200, "", func(int) string { return fmt.Sprintf(oaChunk, `{"content":"`+kib+`"}`) }, "the turn's text, thinking and tool calls passed 64 KiB"},
		{"openai", "tool arguments", 200,
			fmt.Sprintf(oaChunk, `{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"shell","arguments":""}}]}`),
			func(int) string {
				return fmt.Sprintf(oaChunk, `{"tool_calls":[{"index":0,"function":{"arguments":"`+kib+`"}}]}`)
			}, "the turn's text, thinking and tool calls passed 64 KiB"},
		{"openai", "tool name deltas", 200, "", func(int) string {
			return fmt.Sprintf(oaChunk, `{"tool_calls":[{"index":0,"function":{"name":"a"}}]}`)
		}, "passed 64 KiB"},
		{"openai", "ever more empty tool calls", 200, "", func(i int) string {
			return fmt.Sprintf(oaChunk, fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":""}}]}`, i))
		}, "passed 64 KiB"},
		{"openai", "one line without end", 200, `data: {"id":"c","choices":[{"index":0,"delta":{"content":"`, func(int) string { return kib },
			"one event of the stream reached 64 KiB"},
		{"openai", "data lines without a blank line", 200, "", func(int) string { return "data: " + kib + "\n" },
			"one event of the stream reached"},
		{"openai", "lone CR line ends", 200, "", func(int) string { return "data: " + kib + "\r\r" },
			"one event of the stream reached"},
		{"openai", "endless error body", 400, `{"error":{"message":"`, func(int) string { return kib },
			"the model server's 400 Bad Request response passed 1 MiB"},
		{"openai", "endless 500 body", 500, `{"error":{"message":"`, func(int) string { return kib },
			"the model server's 500 Internal Server Error response passed 1 MiB"},

		{"anthropic", "text deltas", 200, anStart + anBlock(0, `{"type":"text","text":""}`),
			func(int) string { return anDelta(0, `{"type":"text_delta","text":"`+kib+`"}`) }, "the turn's text, thinking and tool calls passed 64 KiB"},
		{"anthropic", "thinking deltas", 200, anStart + anBlock(0, `{"type":"thinking","thinking":"","signature":""}`),
			func(int) string { return anDelta(0, `{"type":"thinking_delta","thinking":"`+kib+`"}`) }, "passed 64 KiB"},
		{"anthropic", "signature deltas", 200, anStart + anBlock(0, `{"type":"thinking","thinking":"","signature":""}`),
			func(int) string { return anDelta(0, `{"type":"signature_delta","signature":"`+kib+`"}`) }, "passed 64 KiB"},
		{"anthropic", "tool arguments", 200, anStart + anBlock(0, `{"type":"tool_use","id":"t1","name":"shell","input":{}}`),
			func(int) string { return anDelta(0, `{"type":"input_json_delta","partial_json":"`+kib+`"}`) }, "passed 64 KiB"},
		{"anthropic", "ever more tool calls", 200, anStart,
			func(i int) string { return anBlock(i, `{"type":"tool_use","id":"t","name":"s","input":{}}`) }, "passed 64 KiB"},
		{"anthropic", "ever more empty text blocks", 200, anStart,
			func(i int) string { return anBlock(i, `{"type":"text","text":""}`) }, "passed 64 KiB"},
		{"anthropic", "one line without end", 200, anStart + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"",
			func(int) string { return kib }, "one event of the stream reached"},
		{"anthropic", "data lines without a blank line", 200, anStart, func(int) string { return "data: " + kib + "\n" },
			"one event of the stream reached"},
		{"anthropic", "pings forever", 200, anStart, func(int) string { return "event: ping\ndata: {\"type\":\"ping\"}\n" },
			"one event of the stream reached"},
		{"anthropic", "endless error body", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"`, func(int) string { return kib },
			"the model server's 400 Bad Request response passed 1 MiB"},
	}
	for _, c := range cases {
		t.Run(c.provider+"/"+c.name, func(t *testing.T) {
			ct := sse
			if c.status != 200 {
				ct = "application/json"
			}
			srv := newForeverServer(t, c.status, ct, c.head, c.event)
			o := fastOpts(env(map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}))
			o.MaxTurnBytes = limit
			o.MaxRetries = 3
			o.MaxRetryDelay = time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := newModel(t, c.provider, srv.URL, o).Turn(ctx, request())
			var tl *model.TooLargeError
			if !errors.As(err, &tl) {
				t.Fatalf("error %v (%T), want a *TooLargeError", err, err)
			}
			t.Logf("error: %v", err)
			msg := err.Error()
			if !strings.HasPrefix(msg, c.provider+": ") || !strings.Contains(msg, c.want) || !strings.Contains(msg, "hitl stopped reading the response") {
				t.Errorf("error %q, want %q", msg, c.want)
			}
			select {
			case <-srv.done:
			case <-time.After(10 * time.Second):
				t.Fatal("the server is still streaming: the response was not closed")
			}
			// Not retried: neither as a whole turn nor by the SDK (a 500's
			// body is read only on the last of its retries).
			want := int32(1)
			if c.status == 500 {
				want = 4
			}
			if n := srv.requests.Load(); n != want {
				t.Errorf("%d requests, want %d", n, want)
			}
			// What was sent is bounded: the event bound, plus what the
			// socket buffers held when hitl stopped (up to a few MiB on a
			// loaded machine: loopback buffers grow under load).
			if w := srv.written.Load(); w > 16<<20+4<<20 {
				t.Errorf("the server wrote %d bytes before hitl stopped reading", w)
			}
		})
	}
}

// TestCutRetriedBoundNot: a stream cut mid-turn retries the turn; a turn
// past the bound fails at once, however many retries are allowed.
func TestCutRetriedBoundNot(t *testing.T) {
	for _, f := range formats {
		t.Run(f.provider, func(t *testing.T) {
			big := strings.Repeat("y", 2048)
			srv := fakellm.New(f.format,
				fakellm.Reply{Text: []string{"par", "tial"}, CutAfter: 2},
				fakellm.Reply{Text: []string{big, big}},
				fakellm.Reply{Text: []string{"ok"}},
			)
			defer srv.Close()
			o := fastOpts(env(map[string]string{f.keyVar: "k"}))
			o.MaxTurnBytes = 3000
			_, err := newModel(t, f.provider, srv.URL, o).Turn(context.Background(), request())
			var tl *model.TooLargeError
			if !errors.As(err, &tl) {
				t.Fatalf("error %v, want a *TooLargeError", err)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d requests, want 2 (the cut one, then the one past the bound, not retried)", n)
			}
		})
	}
}

// TestTurnAtBound: a turn within the bound is returned whole; one byte
// less of bound and it fails. (Anthropic counts 256 bytes for the text
// block's bookkeeping.)
func TestTurnAtBound(t *testing.T) {
	text := strings.Repeat("z", 4096)
	for _, f := range formats {
		part := int64(0)
		if f.provider == "anthropic" {
			part = 256
		}
		for _, c := range []struct {
			limit int64
			ok    bool
		}{{4096 + part, true}, {4095 + part, false}} {
			t.Run(fmt.Sprintf("%s/%d", f.provider, c.limit), func(t *testing.T) {
				srv := fakellm.New(f.format, fakellm.Reply{Text: []string{text[:1000], text[1000:]}})
				defer srv.Close()
				o := fastOpts(env(map[string]string{f.keyVar: "k"}))
				o.MaxTurnBytes = c.limit
				got, err := newModel(t, f.provider, srv.URL, o).Turn(context.Background(), request())
				if !c.ok {
					var tl *model.TooLargeError
					if !errors.As(err, &tl) {
						t.Fatalf("error %v, want a *TooLargeError", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.Message.Text != text {
					t.Errorf("text of %d bytes, want %d", len(got.Message.Text), len(text))
				}
			})
		}
	}
}

// TestKeepAliveForeverIsBoundedInTime: a server that keeps the stream busy
// with keep-alive pings but never finishes the turn never goes idle; the
// request's time bound ends it, without a retry.
func TestKeepAliveForeverIsBoundedInTime(t *testing.T) {
	old := model.MaxRequestDuration
	model.MaxRequestDuration = 300 * time.Millisecond
	t.Cleanup(func() { model.MaxRequestDuration = old })
	for _, c := range []struct {
		provider, head, ping string
	}{
		{"openai", fmt.Sprintf(oaChunk, `{"role":"assistant","content":""}`), ": keep-alive\n\n"},
		{"anthropic", anStart, anEvent("ping", `"x":1`)},
	} {
		t.Run(c.provider, func(t *testing.T) {
			srv := newForeverServer(t, 200, "text/event-stream", c.head, func(int) string {
				time.Sleep(5 * time.Millisecond)
				return c.ping
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := newModel(t, c.provider, srv.URL, fastOpts(env(map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}))).Turn(ctx, request())
			var tl *model.TooLongError
			if !errors.As(err, &tl) {
				t.Fatalf("err = %v, want a TooLongError", err)
			}
			if n := srv.requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1 (not retried)", n)
			}
		})
	}
}
