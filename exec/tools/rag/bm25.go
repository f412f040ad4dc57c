package rag

import (
	"context"
	"math"
	"sort"
	"strings"
)

// stopwords are the words BM25 leaves out (cagent's list).
var stopwords = map[string]bool{
	"the": true, "a": true, "an": true, "and": true, "or": true, "but": true, "in": true, "on": true, "at": true, "to": true,
	"for": true, "of": true, "as": true, "by": true, "is": true, "was": true, "are": true, "were": true, "be": true, "been": true,
}

var punctuation = strings.NewReplacer(".", " ", ",", " ", "!", " ", "?", " ", ";", " ", ":", " ", "(", " ", ")", " ",
	"[", " ", "]", " ", "{", " ", "}", " ", `"`, " ", "'", " ", "\n", " ", "\t", " ")

// terms are text's BM25 terms: lower case, punctuation as space, longer
// than two bytes, no stopword (as cagent tokenizes).
func terms(text string) []string {
	var out []string
	for _, w := range strings.Fields(punctuation.Replace(strings.ToLower(text))) {
		if len(w) > 2 && !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

// bm25 is an index of chunks scored with Okapi BM25.
type bm25 struct {
	chunks []chunk
	tf     []map[string]int
	length []int
	df     map[string]int
	avg    float64
	k1, b  float64
}

func newBM25(ctx context.Context, chunks []chunk, k1, b float64) (*bm25, error) {
	x := &bm25{chunks: chunks, df: map[string]int{}, k1: k1, b: b}
	total := 0
	for i, c := range chunks {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		tf := map[string]int{}
		ts := terms(c.text)
		for _, t := range ts {
			tf[t]++
		}
		for t := range tf {
			x.df[t]++
		}
		x.tf = append(x.tf, tf)
		x.length = append(x.length, len(ts))
		total += len(ts)
	}
	if len(chunks) > 0 {
		x.avg = float64(total) / float64(len(chunks))
	}
	return x, nil
}

// search scores every chunk for query: the sum over the query's terms of
// idf·tf·(k1+1)/(tf+k1·(1−b+b·len/avg)), divided by the number of terms
// and capped at 1 (cagent's normalization), keeping scores of at least
// threshold, best first, at most limit.
func (x *bm25) search(query string, threshold float64, limit int) ([]hit, error) {
	qs := terms(query)
	if len(qs) == 0 {
		return nil, errNoTerms
	}
	n := float64(len(x.chunks))
	var out []hit
	for i, c := range x.chunks {
		var sum float64
		for _, q := range qs {
			tf := float64(x.tf[i][q])
			if tf == 0 {
				continue
			}
			df := float64(x.df[q])
			idf := math.Log((n-df+0.5)/(df+0.5) + 1)
			ratio := 1.0
			if x.avg > 0 {
				ratio = float64(x.length[i]) / x.avg
			}
			sum += idf * tf * (x.k1 + 1) / (tf + x.k1*(1-x.b+x.b*ratio))
		}
		score := math.Min(sum/float64(len(qs)), 1)
		if sum > 0 && score >= threshold {
			out = append(out, hit{chunk: c, score: score})
		}
	}
	sortHits(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// hit is a chunk found, with its score.
type hit struct {
	chunk
	score float64
}

func sortHits(h []hit) {
	sort.SliceStable(h, func(i, j int) bool { return h[i].score > h[j].score })
}
