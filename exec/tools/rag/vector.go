package rag

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/hitl-dev/hitl/exec"
)

// Embedder turns texts into vectors (model.Embedder).
type Embedder interface {
	Embed(ctx context.Context, texts []string, dims int) ([][]float64, error)
}

// vectors is an index of chunks by embedding, searched by cosine
// similarity.
type vectors struct {
	chunks []chunk
	vecs   [][]float64
	embed  Embedder
	dims   int
}

// embedAll embeds texts in batches, at most concurrency requests at once;
// each vector must have dims numbers.
func embedAll(ctx context.Context, e Embedder, texts []string, dims, batch, concurrency int) ([][]float64, error) {
	out := make([][]float64, len(texts))
	if batch <= 0 {
		batch = 50
	}
	sem := make(chan struct{}, max(concurrency, 1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for start := 0; start < len(texts); start += batch {
		end := min(start+batch, len(texts))
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			vs, err := e.Embed(ctx, texts[start:end], dims)
			if err == nil {
				for i, v := range vs {
					if len(v) != dims {
						err = fmt.Errorf("the embedding model gave a vector of %d numbers; vector_dimensions says %d", len(v), dims)
						break
					}
					out[start+i] = v
				}
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out, first
}

func cosine(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

func (v *vectors) search(ctx context.Context, query string, threshold float64, limit int) ([]hit, error) {
	if len(v.chunks) == 0 {
		return nil, nil
	}
	qv, err := v.embed.Embed(ctx, []string{query}, v.dims)
	if err != nil {
		return nil, err
	}
	if len(qv) != 1 || len(qv[0]) != v.dims {
		return nil, fmt.Errorf("the embedding model gave no vector of %d numbers for the query", v.dims)
	}
	var out []hit
	for i, c := range v.chunks {
		out = append(out, hit{chunk: c, score: cosine(qv[0], v.vecs[i])})
	}
	sortHits(out)
	if len(out) > limit {
		out = out[:limit]
	}
	kept := out[:0]
	for _, h := range out {
		if h.score >= threshold {
			kept = append(kept, h)
		}
	}
	return kept, nil
}

// DefaultSemanticPrompt is what a semantic-embeddings chat model is asked
// of each chunk when the file gives no semantic_prompt.
const DefaultSemanticPrompt = "Summarize what the following part of ${path} is about, for semantic search: name the concepts, functions and facts it holds, in 2 to 4 sentences.\n\n${content}"

// summarize asks m for a summary of each chunk (semantic-embeddings):
// what is embedded is "File: PATH\n\n" and the summary (the chunk itself
// when the summary is empty), cut at 2000 bytes.
func summarize(ctx context.Context, m exec.Model, prompt string, chunks []chunk) ([]string, error) {
	if prompt == "" {
		prompt = DefaultSemanticPrompt
	}
	out := make([]string, len(chunks))
	for i, c := range chunks {
		text := strings.NewReplacer("${path}", c.path, "${basename}", baseName(c.path), "${chunk_index}", fmt.Sprint(c.index),
			"${content}", c.text, "${ast_context}", "").Replace(prompt)
		turn, err := m.Turn(ctx, exec.Request{Messages: []exec.Message{{Role: exec.RoleUser, Text: text}}})
		if err != nil {
			return nil, fmt.Errorf("summarizing %s: %w", c.path, err)
		}
		summary := strings.TrimSpace(turn.Message.Text)
		if summary == "" {
			summary = c.text
		}
		s := "File: " + c.path + "\n\n" + summary
		if len(s) > 2000 {
			s = s[:2000] + "..."
		}
		out[i] = s
	}
	return out, nil
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
