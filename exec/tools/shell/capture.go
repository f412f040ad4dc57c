package shell

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxOutput is the most characters of command output the model receives;
// longer output keeps its head and tail around a marker.
const MaxOutput = 30000

// capture keeps what a command prints in bounded memory, however much it
// prints: the first limit characters and about the last limit/2 (as bytes,
// enough for limit/2 characters of up to 4 bytes each, plus slack so a
// secret crossing the cut is still whole when masked).
type capture struct {
	limit int // characters

	head      []byte
	headChars int

	tail  []byte // ring buffer
	tailN int    // bytes written to the ring in total

	chars int64 // characters seen (UTF-8 start bytes)
	bytes int64
}

func newCapture(limit int) *capture {
	return &capture{limit: limit, tail: make([]byte, 4*(limit/2)+8192)}
}

// Write never fails and never grows past its bounds.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.bytes += int64(n)
	c.chars += int64(countChars(p))
	// The head takes characters until it has limit of them, and the
	// continuation bytes of its last one (which may come in the next write).
	i := 0
	for i < len(p) && len(c.head)+i < 4*c.limit+4 {
		if utf8.RuneStart(p[i]) {
			if c.headChars == c.limit {
				break
			}
			c.headChars++
		}
		i++
	}
	c.head = append(c.head, p[:i]...)
	c.ring(p)
	return n, nil
}

func (c *capture) ring(p []byte) {
	size := len(c.tail)
	if len(p) >= size {
		p = p[len(p)-size:]
	}
	at := c.tailN % size
	k := copy(c.tail[at:], p)
	copy(c.tail, p[k:])
	c.tailN += len(p)
}

// countChars counts UTF-8 start bytes: characters, for valid text.
func countChars(p []byte) int {
	n := 0
	i := 0
	// ASCII fast path, eight bytes at a time.
	for ; i+8 <= len(p); i += 8 {
		if binary.LittleEndian.Uint64(p[i:])&0x8080808080808080 == 0 {
			n += 8
			continue
		}
		for _, b := range p[i : i+8] {
			if utf8.RuneStart(b) {
				n++
			}
		}
	}
	for _, b := range p[i:] {
		if utf8.RuneStart(b) {
			n++
		}
	}
	return n
}

// tailBytes returns the ring's content in order.
func (c *capture) tailBytes() []byte {
	size := len(c.tail)
	if c.tailN <= size {
		return c.tail[:c.tailN]
	}
	at := c.tailN % size
	return append(append([]byte{}, c.tail[at:]...), c.tail[:at]...)
}

// Text returns the output for the model: all of it when it has at most limit
// characters, else its head and tail around a marker saying how much was
// cut. mask hides secret values; it runs before the cut so a secret crossing
// it is hidden whole. The text is valid UTF-8.
func (c *capture) Text(mask func(string) string) string {
	if mask == nil {
		mask = func(s string) string { return s }
	}
	if c.chars <= int64(c.limit) && c.bytes == int64(len(c.head)) {
		return strings.ToValidUTF8(mask(string(c.head)), "\uFFFD")
	}
	half := c.limit / 2
	head := firstChars(mask(strings.ToValidUTF8(string(c.head), "\uFFFD")), half)
	tail := lastChars(mask(strings.ToValidUTF8(string(c.tailBytes()), "\uFFFD")), half)
	cut := max(c.chars-int64(half)*2, 0)
	return fmt.Sprintf("%s\n[... %d characters cut: the output had %d characters (%d bytes); the first and last %d are shown ...]\n%s",
		head, cut, c.chars, c.bytes, half, tail)
}

func firstChars(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

func lastChars(s string, n int) string {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
