package config

import (
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// RAG is one entry of the top-level rag: map (cagent's retrieval): the
// documents, how they are searched, and the tool agents naming it get.
type RAG struct {
	Name string
	Pos  Pos
	// ToolName, Description, Instruction: tool: {name, description,
	// instruction}; empty: cagent's defaults.
	ToolName, Description, Instruction string
	// Docs are the shared documents: paths, directories or globs, relative
	// ones from the agent file's directory.
	Docs []string
	// Dir is the agent file's directory (absolute): what a docs: entry
	// under it names must really lie there, symlinks resolved.
	Dir        string
	Strategies []*RAGStrategy
	Results    RAGResults
}

// RAGStrategy is one retrieval strategy of a rag entry.
type RAGStrategy struct {
	Type string // bm25, chunked-embeddings, semantic-embeddings
	Pos  Pos
	Docs []string // the rag's docs, then its own
	// Database is where cagent keeps the index; hitl keeps it in memory
	// for the run and does not write it.
	Database string
	// Chunking, in runes.
	ChunkSize, ChunkOverlap int
	WordBoundaries          bool
	// Limit is the most results the strategy gives (cagent's default 5).
	Limit int
	// bm25
	K1, B float64
	// Threshold is the least score kept (bm25: its normalized score;
	// embeddings: cosine similarity).
	Threshold float64
	// chunked- and semantic-embeddings
	EmbeddingModel *Model
	EmbeddingRef   string
	Dims           int
	BatchSize      int
	Concurrency    int
	// semantic-embeddings
	ChatModel      *Model
	ChatRef        string
	SemanticPrompt string
}

// RAGResults is a rag entry's results: how strategies' results combine.
type RAGResults struct {
	Limit       int
	Deduplicate bool
	FullContent bool
	// Fusion is rrf (default), max or weighted; FusionK is rrf's k.
	Fusion  string
	FusionK float64
	Weights map[string]float64
	Rerank  *RAGRerank
}

// RAGRerank is results.reranking: a model scores each result.
type RAGRerank struct {
	Model     *Model
	Ref       string
	TopK      int
	Threshold float64
	Criteria  string
}

var (
	ragKeys       = []string{"tool", "docs", "respect_vcs", "strategies", "results"}
	ragToolKeys   = []string{"name", "description", "instruction"}
	ragResultKeys = []string{"limit", "deduplicate", "include_score", "return_full_content", "fusion", "reranking"}
	ragStrategies = []string{"bm25", "chunked-embeddings", "semantic-embeddings"}
	// strategyKeys are every strategy's; the others by type.
	strategyKeys = []string{"type", "docs", "database", "chunking", "limit", "threshold", "respect_vcs"}
	strategyOwn  = map[string][]string{
		"bm25":                {"k1", "b"},
		"chunked-embeddings":  {"embedding_model", "vector_dimensions", "similarity_metric", "embedding_batch_size", "batch_size", "max_embedding_concurrency", "max_indexing_concurrency"},
		"semantic-embeddings": {"embedding_model", "vector_dimensions", "similarity_metric", "embedding_batch_size", "batch_size", "max_embedding_concurrency", "max_indexing_concurrency", "chat_model", "semantic_prompt", "ast_context"},
	}
)

// rags reads the top-level rag: map.
func (l *loader) rags(n *yaml.Node, models map[string]*Model) map[string]*RAG {
	out := map[string]*RAG{}
	if !l.want(n, yaml.MappingNode, "a mapping of rag names to {tool, docs, strategies, results}") {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := out[k.Value]; dup {
			l.errorf(k, "rag %q appears twice", k.Value)
			continue
		}
		out[k.Value] = l.rag(k, v, models)
	}
	return out
}

func (l *loader) rag(k, n *yaml.Node, models map[string]*Model) *RAG {
	r := &RAG{Name: k.Value, Pos: pos(k), Results: RAGResults{Limit: 15, Deduplicate: true, Fusion: "rrf", FusionK: 60}}
	if !l.want(n, yaml.MappingNode, "a rag entry {tool, docs, strategies, results}") {
		return r
	}
	dir := filepath.Dir(l.file)
	if abs, err := filepath.Abs(dir); err == nil {
		r.Dir = abs
	}
	var strategiesNode *yaml.Node
	l.eachKey(n, "rag key", ragKeys, nil, func(key string, k, v *yaml.Node) {
		switch key {
		case "tool":
			l.eachKey(v, "rag tool key", ragToolKeys, nil, func(key string, k, v *yaml.Node) {
				switch key {
				case "name":
					r.ToolName = l.str(v)
				case "description":
					r.Description = l.scalar(v)
				case "instruction":
					r.Instruction = l.scalar(v)
				}
			})
		case "docs":
			r.Docs = ragPaths(dir, l.strings(v))
		case "respect_vcs":
			l.boolean(v) // .git is always skipped; .gitignore is not read (README)
		case "strategies":
			strategiesNode = v
		case "results":
			l.ragResults(&r.Results, v, models)
		}
	})
	if strategiesNode == nil {
		l.errorf(n, "rag %s has no strategies: list at least one (bm25, chunked-embeddings, semantic-embeddings)", r.Name)
		return r
	}
	r.Strategies = mappings(l, strategiesNode, "a list of strategies", "a strategy {type, ...}", func(m *yaml.Node) *RAGStrategy {
		return l.ragStrategy(r, m, dir, models)
	})
	if len(r.Strategies) == 0 && strategiesNode.Kind == yaml.SequenceNode {
		l.errorf(strategiesNode, "rag %s has no strategies: list at least one (bm25, chunked-embeddings, semantic-embeddings)", r.Name)
	}
	return r
}

func ragPaths(dir string, paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, p)
	}
	return out
}

func (l *loader) ragStrategy(r *RAG, n *yaml.Node, dir string, models map[string]*Model) *RAGStrategy {
	s := &RAGStrategy{Pos: pos(n), ChunkSize: 1500, ChunkOverlap: 75, Limit: 5, K1: 1.5, B: 0.75, BatchSize: 50, Concurrency: 3}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "type" {
			s.Type = l.str(n.Content[i+1])
			if !contains(ragStrategies, s.Type) {
				l.errorf(n.Content[i+1], "rag %s: strategy type %q%s; expected one of: %s", r.Name, s.Type, didYouMean(s.Type, ragStrategies), strings.Join(ragStrategies, ", "))
				return s
			}
		}
	}
	if s.Type == "" {
		l.errorf(n, "rag %s: a strategy needs type: (%s)", r.Name, strings.Join(ragStrategies, ", "))
		return s
	}
	if s.Type != "bm25" {
		s.Threshold = 0.5
	}
	s.Docs = append(s.Docs, r.Docs...)
	var embedNode, chatNode, chunkingNode *yaml.Node
	known := append(append([]string(nil), strategyKeys...), strategyOwn[s.Type]...)
	l.eachKey(n, s.Type+" strategy key", known, nil, func(key string, k, v *yaml.Node) {
		switch key {
		case "docs":
			for _, p := range ragPaths(dir, l.strings(v)) {
				if !contains(s.Docs, p) {
					s.Docs = append(s.Docs, p)
				}
			}
		case "database":
			s.Database = l.str(v)
		case "chunking":
			chunkingNode = v
			l.eachKey(v, "chunking key", []string{"size", "overlap", "respect_word_boundaries", "code_aware"}, nil, func(key string, k, v *yaml.Node) {
				switch key {
				case "size":
					s.ChunkSize = int(l.integer(v, 1))
				case "overlap":
					s.ChunkOverlap = int(l.integer(v, 0))
				case "respect_word_boundaries":
					s.WordBoundaries = l.boolean(v)
				case "code_aware":
					if l.boolean(v) {
						l.errorf(v, "chunking code_aware (chunks along Go functions, with tree-sitter) is not supported by hitl")
					}
				}
			})
		case "limit":
			s.Limit = int(l.integer(v, 1))
		case "threshold":
			if f := l.float(v); f != nil {
				s.Threshold = *f
			}
		case "k1":
			if f := l.float(v); f != nil {
				s.K1 = *f
			}
		case "b":
			if f := l.float(v); f != nil {
				s.B = *f
			}
		case "embedding_model":
			embedNode = v
		case "vector_dimensions":
			s.Dims = int(l.integer(v, 1))
		case "similarity_metric":
			if m := l.str(v); m != "cosine_similarity" {
				l.errorf(v, "similarity_metric %q: the only metric is cosine_similarity", m)
			}
		case "embedding_batch_size", "batch_size":
			s.BatchSize = int(l.integer(v, 1))
			if s.BatchSize > 2048 {
				l.errorf(v, "%s %d: at most 2048 texts go in one embeddings request", key, s.BatchSize)
			}
		case "max_embedding_concurrency", "max_indexing_concurrency":
			if c := int(l.integer(v, 1)); key == "max_embedding_concurrency" {
				s.Concurrency = min(c, 16)
			}
		case "chat_model":
			chatNode = v
		case "semantic_prompt":
			s.SemanticPrompt = l.scalar(v)
		case "ast_context":
			l.boolean(v) // the AST context comes from code_aware chunks, which hitl does not make: empty, as in cagent without them
		case "respect_vcs":
			l.boolean(v)
		}
	})
	if s.ChunkSize >= 1 {
		l.checkOverlap(r, s, chunkingNode)
	}
	if s.Type != "bm25" {
		if embedNode == nil {
			l.errorf(n, "rag %s: a %s strategy needs embedding_model", r.Name, s.Type)
		} else {
			s.EmbeddingRef = l.str(embedNode)
			s.EmbeddingModel = l.ragModel(r, embedNode, models)
		}
		if s.Dims == 0 {
			l.errorf(n, "rag %s: a %s strategy needs vector_dimensions (the embedding model's vector length)", r.Name, s.Type)
		}
	}
	if s.Type == "semantic-embeddings" {
		if chatNode == nil {
			l.errorf(n, "rag %s: a semantic-embeddings strategy needs chat_model (it summarizes each chunk)", r.Name)
		} else {
			s.ChatRef = l.str(chatNode)
			s.ChatModel = l.ragModel(r, chatNode, models)
		}
	}
	return s
}

// checkOverlap holds the step between chunks to MinChunkStep: an overlap
// written that leaves less is an error at it; the default overlap shrinks
// to fit a small size.
func (l *loader) checkOverlap(r *RAG, s *RAGStrategy, chunking *yaml.Node) {
	least := MinChunkStep(s.ChunkSize)
	step := s.ChunkSize - s.ChunkOverlap
	if step >= least {
		return
	}
	var at *yaml.Node
	if chunking != nil {
		for i := 0; i+1 < len(chunking.Content); i += 2 {
			if chunking.Content[i].Value == "overlap" {
				at = chunking.Content[i+1]
			}
		}
	}
	if at == nil {
		s.ChunkOverlap = s.ChunkSize - least
		return
	}
	l.errorf(at, "rag %s: chunking overlap %d leaves a step of %d runes between chunks of size %d; the step must be at least %d (a quarter of size, so a rune is in at most 4 chunks): set overlap to at most %d",
		r.Name, s.ChunkOverlap, step, s.ChunkSize, least, s.ChunkSize-least)
}

// MinChunkStep is the least step between the starts of two chunks of
// size runes (size minus overlap): a quarter of size, so that each rune is
// in at most four chunks.
func MinChunkStep(size int) int { return max(1, (size+3)/4) }

func (l *loader) ragModel(r *RAG, n *yaml.Node, models map[string]*Model) *Model {
	return l.modelRef(&Agent{Name: "of rag " + r.Name}, n, l.str(n), models, 0)
}

func (l *loader) ragResults(res *RAGResults, n *yaml.Node, models map[string]*Model) {
	l.eachKey(n, "rag results key", ragResultKeys, nil, func(key string, k, v *yaml.Node) {
		switch key {
		case "limit":
			res.Limit = int(l.integer(v, 1))
		case "deduplicate":
			res.Deduplicate = l.boolean(v)
		case "include_score":
			l.boolean(v) // results always carry their similarity, as cagent's
		case "return_full_content":
			res.FullContent = l.boolean(v)
		case "fusion":
			l.eachKey(v, "fusion key", []string{"strategy", "k", "weights"}, nil, func(key string, k, v *yaml.Node) {
				switch key {
				case "strategy":
					res.Fusion = l.str(v)
					if !contains([]string{"rrf", "max", "weighted"}, res.Fusion) {
						l.errorf(v, "fusion strategy %q: expected rrf, max or weighted", res.Fusion)
					}
				case "k":
					if f := l.float(v); f != nil {
						res.FusionK = *f
					}
				case "weights":
					res.Weights = map[string]float64{}
					if l.want(v, yaml.MappingNode, "a mapping of strategy type to weight") {
						for i := 0; i+1 < len(v.Content); i += 2 {
							if f := l.float(v.Content[i+1]); f != nil {
								res.Weights[v.Content[i].Value] = *f
							}
						}
					}
				}
			})
			if res.Fusion == "weighted" && len(res.Weights) == 0 {
				l.errorf(v, "fusion weighted needs weights: {strategy type: weight}")
			}
		case "reranking":
			rr := &RAGRerank{Threshold: 0.5}
			var modelNode *yaml.Node
			l.eachKey(v, "reranking key", []string{"model", "top_k", "threshold", "criteria"}, nil, func(key string, k, v *yaml.Node) {
				switch key {
				case "model":
					modelNode = v
				case "top_k":
					rr.TopK = int(l.integer(v, 1))
				case "threshold":
					if f := l.float(v); f != nil {
						rr.Threshold = *f
					}
				case "criteria":
					rr.Criteria = l.scalar(v)
				}
			})
			if modelNode == nil {
				l.errorf(v, "reranking needs model: the model that scores the results")
			} else {
				rr.Ref = l.str(modelNode)
				rr.Model = l.modelRef(&Agent{Name: "of the reranking"}, modelNode, rr.Ref, models, 0)
			}
			res.Rerank = rr
		}
	})
}
