package gemini

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/hitl-dev/hitl/exec/model/internal/provider"
)

// wholeLines is a transport that hands the SDK a streamed (2xx) body one
// whole line at a time, each at most limit bytes. The SDK's line scanner
// returns a line cut by a read error as if it were whole, and its error
// for that line quotes all of it: a line without end would cost several
// times the turn bound in memory and print megabytes to the terminal.
// With whole lines only, a line past the bound ends the stream with a
// *provider.TooLargeError and the SDK never holds any of it.
type wholeLines struct {
	next  http.RoundTripper
	limit int64
}

func (t wholeLines) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.next.RoundTrip(req)
	if err != nil || res.StatusCode/100 != 2 {
		return res, err
	}
	res.Body = &lineBody{src: bufio.NewReaderSize(res.Body, 64<<10), closer: res.Body, limit: t.limit}
	return res, nil
}

type lineBody struct {
	src    *bufio.Reader
	closer io.Closer
	limit  int64
	line   bytes.Buffer // the current line, handed out from off
	off    int
	err    error
}

func (b *lineBody) Read(p []byte) (int, error) {
	if b.off >= b.line.Len() {
		if b.err != nil {
			return 0, b.err
		}
		b.line.Reset()
		b.off = 0
		for {
			chunk, err := b.src.ReadSlice('\n')
			if int64(b.line.Len()+len(chunk)) > b.limit {
				b.line.Reset()
				b.err = &provider.TooLargeError{Provider: Name, What: "one line of the stream", Limit: b.limit}
				return 0, b.err
			}
			b.line.Write(chunk)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil {
				// The end of the body, or a cut: what came before is a
				// whole line only if it ends with one.
				b.err = err
				if tl, ok := provider.AsTooLarge(err, Name); ok {
					b.line.Reset()
					b.err = tl
				}
				if b.line.Len() > 0 && !bytes.HasSuffix(b.line.Bytes(), []byte("\n")) {
					b.line.Reset()
					if err == io.EOF {
						b.err = io.ErrUnexpectedEOF
					}
				}
			}
			break
		}
		if b.line.Len() == 0 {
			return 0, b.err
		}
	}
	n := copy(p, b.line.Bytes()[b.off:])
	b.off += n
	return n, nil
}

func (b *lineBody) Close() error { return b.closer.Close() }
