package rag

import (
	"context"
	"fmt"
	"strings"
)

// chunk is a piece of a document.
type chunk struct {
	path  string
	index int
	text  string
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// budget counts the chunks of one strategy and their bytes while they are
// made: splitting stops at the first chunk past a bound, so an overlap
// that repeats the text never holds more than the bounds in memory.
type budget struct {
	chunks, bytes       int
	maxChunks, maxBytes int
}

// add counts a chunk of n bytes.
func (b *budget) add(n int) error {
	b.chunks++
	b.bytes += n
	switch {
	case b.chunks > b.maxChunks:
		return fmt.Errorf("more than %d chunks: raise chunking.size or name fewer docs", b.maxChunks)
	case b.bytes > b.maxBytes:
		return fmt.Errorf("the chunks hold more than %d bytes (overlap repeats text): lower chunking.overlap, raise chunking.size or name fewer docs", b.maxBytes)
	}
	return nil
}

// split cuts text into chunks of size runes overlapping by overlap, as
// cagent does: with word boundaries a chunk (but the last) ends at
// whitespace near its end, and the next starts at a word. Each chunk is
// counted in b as it is made; past b's bounds, or at the end of ctx, it
// stops with the error.
func split(ctx context.Context, text string, size, overlap int, words bool, b *budget) ([]string, error) {
	if size <= 0 {
		size = 1000
	}
	if overlap >= size {
		overlap = size / 2
	}
	rs := []rune(text)
	var out []string
	for start, n := 0, 0; start < len(rs); n++ {
		if n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		end := min(start+size, len(rs))
		if words && end < len(rs) {
			window := min(max(size/5, 50), 500)
			end = boundary(rs, start, end, window)
		}
		if c := strings.TrimSpace(string(rs[start:end])); c != "" {
			if err := b.add(len(c)); err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		if end >= len(rs) {
			break
		}
		next := max(end-overlap, start+1)
		if words {
			for next < len(rs) && next > 0 && !isSpace(rs[next-1]) {
				next++
			}
			for next < len(rs) && isSpace(rs[next]) {
				next++
			}
		}
		start = next
	}
	return out, nil
}

// boundary moves end back (then forward) to whitespace within window.
func boundary(rs []rune, start, end, window int) int {
	for i := end; i > start && i >= end-window; i-- {
		if isSpace(rs[i-1]) {
			return i
		}
	}
	for i := end; i < len(rs) && i <= end+window; i++ {
		if isSpace(rs[i]) {
			return i
		}
	}
	return end
}
