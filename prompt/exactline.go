package prompt

import (
	"bytes"
	"io"
	"os"
)

// exactLines is stdin read so that no read passes the end of a line: what
// the next process of a script reads starts at the next answer line. A
// regular file is read in blocks and the offset set back after the line's
// newline (the offset is shared with the script and its other processes);
// a pipe or a terminal is read one byte at a time, as the shell's read
// builtin does.
type exactLines struct {
	f        *os.File
	seekable bool
}

// ExactLines wraps r, when it is a file, so that no read passes a newline.
// Anything else is returned as is.
func ExactLines(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok {
		return r
	}
	e := &exactLines{f: f}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		_, err := f.Seek(0, io.SeekCurrent)
		e.seekable = err == nil
	}
	return e
}

func (e *exactLines) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !e.seekable {
		return e.f.Read(p[:1])
	}
	if len(p) > 4096 {
		p = p[:4096]
	}
	n, err := e.f.Read(p)
	if i := bytes.IndexByte(p[:n], '\n'); i >= 0 && i+1 < n {
		if _, serr := e.f.Seek(int64(i+1-n), io.SeekCurrent); serr != nil {
			return n, serr
		}
		return i + 1, nil
	}
	return n, err
}
