package rag

import "strings"

// chunk is a piece of a document.
type chunk struct {
	path  string
	index int
	text  string
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// split cuts text into chunks of size runes overlapping by overlap, as
// cagent does: with word boundaries a chunk (but the last) ends at
// whitespace near its end, and the next starts at a word.
func split(text string, size, overlap int, words bool) []string {
	if size <= 0 {
		size = 1000
	}
	if overlap >= size {
		overlap = size / 2
	}
	rs := []rune(text)
	var out []string
	for start := 0; start < len(rs); {
		end := min(start+size, len(rs))
		if words && end < len(rs) {
			window := min(max(size/5, 50), 500)
			end = boundary(rs, start, end, window)
		}
		if c := strings.TrimSpace(string(rs[start:end])); c != "" {
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
	return out
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
