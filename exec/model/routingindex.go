package model

import (
	"math"
	"strings"
	"sync"
	"unicode"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/porter"
)

// exampleIndex scores routing examples against a message with BM25 over
// English terms, as a full-text match query would.
type exampleIndex struct {
	docs []exampleDoc
	df   map[string]int // in how many examples each term is
	len  int            // terms in all examples
}

type exampleDoc struct {
	route int
	tf    map[string]int
	len   int
}

func (x *exampleIndex) add(route int, text string) {
	d := exampleDoc{route: route, tf: map[string]int{}}
	for _, t := range englishTerms(text) {
		d.tf[t]++
		d.len++
	}
	if x.df == nil {
		x.df = map[string]int{}
	}
	for t := range d.tf {
		x.df[t]++
	}
	x.len += d.len
	x.docs = append(x.docs, d)
}

// best is the route of the example scoring highest for text (the first
// added on a tie), 0 when no example shares a term with it.
func (x *exampleIndex) best(text string) int {
	const k1, b = 1.2, 0.75
	if len(x.docs) == 0 {
		return 0
	}
	avg := float64(x.len) / float64(len(x.docs))
	n := float64(len(x.docs))
	route, top := 0, 0.0
	terms := englishTerms(text)
	for _, d := range x.docs {
		score := 0.0
		for _, t := range terms {
			tf := float64(d.tf[t])
			if tf == 0 {
				continue
			}
			df := float64(x.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(d.len)/avg))
		}
		if score > top {
			route, top = d.route, score
		}
	}
	return route
}

// englishTerms splits text into words (letters and digits), drops
// possessive 's, lowercases them, removes stop words and stems the rest
// (Porter), as an English analyzer does.
func englishTerms(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	}) {
		w = strings.ToLower(strings.Trim(w, "'’"))
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		if w == "" || stopWords()[w] {
			continue
		}
		env := snowballstem.NewEnv(w)
		porter.Stem(env)
		out = append(out, env.Current())
	}
	return out
}

// stopWords are common English words that say nothing about a request
// (made on first use: nothing at start-up).
var stopWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because
been before being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with would
you your yours yourself yourselves`) {
		m[w] = true
	}
	return m
})
