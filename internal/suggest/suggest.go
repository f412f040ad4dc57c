// Package suggest finds the word a person probably meant: the did-you-mean
// of hitl's errors about names (agent file keys, answers-file keys).
package suggest

import (
	"fmt"
	"strings"
)

// DidYouMean returns ` (did you mean "x"?)` for the candidate closest to
// word within a small edit distance, or "".
func DidYouMean(word string, candidates []string) string {
	best, bestDist := "", 3
	if len(word) <= 4 {
		bestDist = 2
	}
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(word), c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the edit distance of a and b where swapping two
// adjacent characters counts as one edit, as the typos it is for do
// ("nmae" is one edit from "name"): the optimal string alignment distance.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
