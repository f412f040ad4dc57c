// Package rag is cagent's retrieval (the top-level rag: map): the
// documents an entry names are cut into chunks and indexed when the run
// starts — BM25 over words, embeddings through the provider's API, or
// embeddings of a chat model's summaries — and an agent naming the entry
// gets one tool that searches them. The index lives in memory for the run.
package rag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

var errNoTerms = errors.New("query contains no valid terms")

// MaxResults is the most results one search gives (cagent's cap).
const MaxResults = 10

// Bounds on an index: chunks of one strategy, and numbers of its vectors
// (chunks × vector_dimensions: 32 M float64s, 256 MiB).
const (
	MaxChunks  = 100000
	MaxNumbers = 32 << 20
	// MaxChunkBytes bounds the text of a strategy's chunks, counted while
	// documents are split (an overlap repeats text).
	MaxChunkBytes = 128 << 20
)

// Options are what building an index needs.
type Options struct {
	// Embedder makes an embedding model's API; Chat a chat model.
	Embedder func(*config.Model) (Embedder, error)
	Chat     func(*config.Model) (exec.Model, error)
	// Notice tells the person of progress and of skipped files.
	Notice func(string)
	// Deny are directories no document is read from (hitl's state).
	Deny []string
}

type strategy struct {
	typ       string
	limit     int
	threshold float64
	bm25      *bm25
	vectors   *vectors
}

// Tool searches one rag entry.
type Tool struct {
	rag *config.RAG
	// full is each document's text as indexed (return_full_content): a
	// search never reads a file again, so a file swapped since (a symlink
	// to a secret, a FIFO) is never read.
	full       map[string]string
	strategies []strategy
	rerank     exec.Model
	notice     func(string)
}

// Name is the tool's name: tool.name, else the entry's.
func Name(r *config.RAG) string {
	if r.ToolName != "" {
		return r.ToolName
	}
	return r.Name
}

// Instructions is the entry's guidance for the system prompt.
func Instructions(r *config.RAG) string {
	if r.Instruction != "" {
		return r.Instruction
	}
	return fmt.Sprintf("Search documents in %s to find relevant code or documentation. Provide a clear search query describing what you need.", Name(r))
}

// New reads and indexes r's documents. Skipped documents are said once
// through o.Notice; the end of ctx stops the indexing with its cause.
func New(ctx context.Context, r *config.RAG, o Options) (*Tool, error) {
	if o.Notice == nil {
		o.Notice = func(string) {}
	}
	t := &Tool{rag: r, notice: o.Notice, full: map[string]string{}}
	skip := onceSkip(r, o.Notice)
	stopped := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("rag %s: indexing stopped: %w", r.Name, context.Cause(ctx))
		}
		return err
	}
	for _, s := range r.Strategies {
		docs, err := collect(ctx, s.Docs, r.Dir, o.Deny, skip)
		if err != nil {
			return nil, stopped(fmt.Errorf("rag %s: %w", r.Name, err))
		}
		size := 0
		for _, d := range docs {
			size += len(d.text)
		}
		o.Notice(fmt.Sprintf("rag %s: indexing %d files (%d bytes) with %s", r.Name, len(docs), size, s.Type))
		chunks, err := chunkAll(ctx, s, docs)
		if err != nil {
			return nil, stopped(fmt.Errorf("rag %s: %s: %w", r.Name, s.Type, err))
		}
		if r.Results.FullContent {
			for _, d := range docs {
				t.full[d.path] = d.text
			}
		}
		if s.Type != "bm25" && len(chunks)*s.Dims > MaxNumbers {
			return nil, fmt.Errorf("rag %s: %s: %d chunks of %d dimensions are more than %d numbers to keep: raise chunking.size or name fewer docs", r.Name, s.Type, len(chunks), s.Dims, MaxNumbers)
		}
		st := strategy{typ: s.Type, limit: s.Limit, threshold: s.Threshold}
		switch s.Type {
		case "bm25":
			if st.bm25, err = newBM25(ctx, chunks, s.K1, s.B); err != nil {
				return nil, stopped(err)
			}
		default:
			e, err := o.Embedder(s.EmbeddingModel)
			if err != nil {
				return nil, fmt.Errorf("rag %s: embedding_model %s: %w", r.Name, s.EmbeddingRef, err)
			}
			texts := make([]string, len(chunks))
			for i, c := range chunks {
				texts[i] = c.text
			}
			if s.Type == "semantic-embeddings" && len(chunks) > 0 {
				chat, err := o.Chat(s.ChatModel)
				if err != nil {
					return nil, fmt.Errorf("rag %s: chat_model %s: %w", r.Name, s.ChatRef, err)
				}
				o.Notice(fmt.Sprintf("rag %s: summarizing %d chunks with %s", r.Name, len(chunks), s.ChatRef))
				if texts, err = summarize(ctx, chat, s.SemanticPrompt, chunks); err != nil {
					return nil, stopped(fmt.Errorf("rag %s: %w", r.Name, err))
				}
			}
			if len(chunks) > 0 {
				o.Notice(fmt.Sprintf("rag %s: embedding %d chunks of %d files with %s", r.Name, len(chunks), len(docs), s.EmbeddingRef))
			}
			vecs, err := embedAll(ctx, e, texts, s.Dims, s.BatchSize, s.Concurrency)
			if err != nil {
				return nil, stopped(fmt.Errorf("rag %s: %w", r.Name, err))
			}
			st.vectors = &vectors{chunks: chunks, vecs: vecs, embed: e, dims: s.Dims}
		}
		t.strategies = append(t.strategies, st)
	}
	if rr := r.Results.Rerank; rr != nil {
		m, err := o.Chat(rr.Model)
		if err != nil {
			return nil, fmt.Errorf("rag %s: reranking model %s: %w", r.Name, rr.Ref, err)
		}
		t.rerank = m
	}
	return t, nil
}

// chunkAll splits a strategy's documents, counting chunks and bytes as it
// goes: the first document past a bound is named in the error.
func chunkAll(ctx context.Context, s *config.RAGStrategy, docs []doc) ([]chunk, error) {
	b := &budget{maxChunks: MaxChunks, maxBytes: MaxChunkBytes}
	var chunks []chunk
	for _, d := range docs {
		parts, err := split(ctx, d.text, s.ChunkSize, s.ChunkOverlap, s.WordBoundaries, b)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, fmt.Errorf("chunking %s: %w", shown(d.path), err)
		}
		for i, c := range parts {
			chunks = append(chunks, chunk{path: d.path, index: i, text: c})
		}
	}
	return chunks, nil
}

// onceSkip says each skipped document once, whichever strategies read it.
func onceSkip(r *config.RAG, notice func(string)) func(string) {
	said := map[string]bool{}
	return func(msg string) {
		if !said[msg] {
			said[msg] = true
			notice(fmt.Sprintf("rag %s: skipped %s", r.Name, msg))
		}
	}
}

// Skipped reads r's documents as a run would and returns what it skips and
// why (each once), for hitl validate; err is what would stop the run.
func Skipped(ctx context.Context, r *config.RAG, deny []string) (skipped []string, err error) {
	skip := onceSkip(r, func(msg string) { skipped = append(skipped, msg) })
	for _, s := range r.Strategies {
		docs, err := collect(ctx, s.Docs, r.Dir, deny, skip)
		if err != nil {
			return skipped, fmt.Errorf("rag %s: %w", r.Name, err)
		}
		if _, err := chunkAll(ctx, s, docs); err != nil {
			return skipped, fmt.Errorf("rag %s: %s: %w", r.Name, s.Type, err)
		}
	}
	return skipped, nil
}

func (t *Tool) Spec() exec.ToolSpec {
	desc := t.rag.Description
	if desc == "" {
		desc = fmt.Sprintf("Search project documents from %s to find relevant code or documentation. Provide a natural language query describing what you need. Returns the most relevant document chunks with file paths.", Name(t.rag))
	}
	return exec.ToolSpec{
		Name:        Name(t.rag),
		Description: desc,
		Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Search query"}},"required":["query"],"additionalProperties":false}`),
	}
}

type result struct {
	SourcePath string  `json:"source_path"`
	Content    string  `json:"content"`
	Similarity float64 `json:"similarity"`
	ChunkIndex int     `json:"chunk_index"`
}

// Call searches: each strategy, their results fused, reranked, cut to
// results.limit, deduplicated by content, at most MaxResults, best first.
func (t *Tool) Call(ctx context.Context, call exec.ToolCall) (exec.Result, error) {
	var args struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return exec.Result{IsError: true, Text: fmt.Sprintf("invalid arguments: %v", err)}, nil
	}
	if args.Query == "" {
		return exec.Result{IsError: true, Text: "query cannot be empty"}, nil
	}
	hits, err := t.search(ctx, args.Query)
	if err != nil {
		if ctx.Err() != nil {
			return exec.Result{}, ctx.Err()
		}
		return exec.Result{IsError: true, Text: "RAG query failed: " + err.Error()}, nil
	}
	out := []result{}
	seen := map[string]bool{}
	for _, h := range hits {
		content := h.text
		if t.rag.Results.FullContent {
			if text, ok := t.full[h.path]; ok {
				content, h.index = text, 0
			}
		}
		if t.rag.Results.Deduplicate {
			if seen[content] {
				continue
			}
			seen[content] = true
		}
		out = append(out, result{SourcePath: h.path, Content: content, Similarity: h.score, ChunkIndex: h.index})
		if len(out) == MaxResults {
			break
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return exec.Result{IsError: true, Text: "RAG query failed: " + err.Error()}, nil
	}
	return exec.Result{Text: string(data)}, nil
}

func (t *Tool) search(ctx context.Context, query string) ([]hit, error) {
	var lists [][]hit
	var types []string
	for _, s := range t.strategies {
		var hits []hit
		var err error
		if s.bm25 != nil {
			hits, err = s.bm25.search(query, s.threshold, s.limit)
		} else {
			hits, err = s.vectors.search(ctx, query, s.threshold, s.limit)
		}
		if err != nil {
			return nil, err
		}
		lists = append(lists, hits)
		types = append(types, s.typ)
	}
	hits, err := fuse(t.rag.Results, types, lists)
	if err != nil {
		return nil, err
	}
	if rr := t.rag.Results.Rerank; rr != nil && t.rerank != nil {
		topK := rr.TopK
		if topK <= 0 {
			topK = t.rag.Results.Limit
		}
		hits = rerank(ctx, t.rerank, rr, query, hits, topK, t.notice)
	}
	if len(hits) > t.rag.Results.Limit {
		hits = hits[:t.rag.Results.Limit]
	}
	return hits, nil
}
