package provider

import "strings"

// Text accumulates streamed text without ever copying what it holds: in
// blocks that double from 256 bytes up to 1 MiB, then stay at 1 MiB. (A
// strings.Builder grows by copying into a larger buffer, holding both at
// once: near the turn bound, that doubles the memory a turn needs.)
type Text struct {
	blocks [][]byte
	n      int
}

const (
	firstBlock = 256
	maxBlock   = 1 << 20
)

// WriteString appends s.
func (t *Text) WriteString(s string) {
	t.n += len(s)
	for len(s) > 0 {
		if len(t.blocks) == 0 || len(t.blocks[len(t.blocks)-1]) == cap(t.blocks[len(t.blocks)-1]) {
			size := firstBlock
			if k := len(t.blocks); k > 0 {
				size = min(2*cap(t.blocks[k-1]), maxBlock)
			}
			t.blocks = append(t.blocks, make([]byte, 0, size))
		}
		b := &t.blocks[len(t.blocks)-1]
		k := min(len(s), cap(*b)-len(*b))
		*b = append(*b, s[:k]...)
		s = s[k:]
	}
}

// Len is the number of bytes written.
func (t *Text) Len() int { return t.n }

// String is all that was written.
func (t *Text) String() string {
	var b strings.Builder
	b.Grow(t.n)
	for _, blk := range t.blocks {
		b.Write(blk)
	}
	return b.String()
}
