package provider

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

type bodyTransport struct {
	status int
	body   string
}

func (t bodyTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: t.status, Body: io.NopCloser(strings.NewReader(t.body))}, nil
}

// TestLimitBodies: a 2xx body is bounded per event (the bytes between blank
// lines, as the SDKs' line scanners see them), any other body as a whole.
func TestLimitBodies(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		ok     bool
	}{
		{"events within the bound", 200, "data: 123\n\ndata: 456\n\n", true},
		{"LF LF ends an event", 200, "data: 1234567\n\ndata: 1234567\n\n", true},
		{"an event one byte short of the bound", 200, "data: 12345678\n\n", true},
		{"an event of the bound", 200, "data: 123456789\n\n", false},
		{"CRLF CRLF ends an event", 200, "data: 12345\r\n\r\ndata: 12345\r\n\r\n", true},
		{"LF CR LF ends an event", 200, "data: 123456\n\r\ndata: 123456\n\r\n", true},
		{"one event past the bound", 200, "data: 1234567890\n\n", false},
		{"two lines of one event past the bound", 200, "data: 1\ndata: 2\ndata: 3\n\n", false},
		{"lone CRs do not end an event", 200, "data: 1\r\rdata: 2\r\r", false},
		{"a line without end", 200, strings.Repeat("x", 100), false},
		{"error body within the bound", 400, "0123456789abcdef", true},
		{"error body one byte past", 400, "0123456789abcdefg", false},
		{"error body at the bound", 500, strings.Repeat("e", 16), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client := &http.Client{Transport: LimitBodies(bodyTransport{c.status, c.body}, 16, 16)}
			res, err := client.Get("http://x/")
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			res.Body.Close()
			var tl *TooLargeError
			if c.ok {
				if err != nil || string(got) != c.body {
					t.Errorf("read %q, %v; want the whole body", got, err)
				}
				return
			}
			if !errors.As(err, &tl) {
				t.Fatalf("error %v, want a *TooLargeError", err)
			}
			if int64(len(got)) > 16 && c.status != 200 {
				t.Errorf("read %d bytes of an error body bounded at 16", len(got))
			}
		})
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB", 17 << 20: "17 MiB", 1088 << 10: "1088 KiB", 100: "100 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestText(t *testing.T) {
	for _, pieces := range [][]string{nil, {""}, {"a"}, {strings.Repeat("a", 255), "bc"}, {strings.Repeat("x", 3<<20), "y", strings.Repeat("z", 1000)}} {
		var tx Text
		for _, p := range pieces {
			tx.WriteString(p)
		}
		want := strings.Join(pieces, "")
		if got := tx.String(); got != want || tx.Len() != len(want) {
			t.Errorf("Text of %d pieces: %d bytes (Len %d), want %d", len(pieces), len(got), tx.Len(), len(want))
		}
		for _, b := range tx.blocks {
			if cap(b) > maxBlock {
				t.Errorf("a block of %d bytes", cap(b))
			}
		}
	}
}
