package rag

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

// corpus writes n documents of about size bytes of words into dir.
func corpus(b *testing.B, dir string, n, size int) {
	words := strings.Fields("blork moss lichen river trout forest nest twig winter bark season mountain cold swim fish guide field observe habitat diet")
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < n; i++ {
		var sb strings.Builder
		for sb.Len() < size {
			sb.WriteString(words[rng.Intn(len(words))])
			sb.WriteByte(' ')
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("doc%04d.txt", i)), []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func bm25Config(dir string) *config.RAG {
	return &config.RAG{Name: "docs", Strategies: []*config.RAGStrategy{{Type: "bm25", Docs: []string{dir}, ChunkSize: 1000, ChunkOverlap: 100, WordBoundaries: true, Limit: 5, K1: 1.5, B: 0.75}},
		Results: config.RAGResults{Limit: 15, Deduplicate: true, Fusion: "rrf", FusionK: 60}}
}

// BenchmarkIndexBM25 indexes 1000 documents of 4 KiB (4 MiB, ~5000 chunks).
func BenchmarkIndexBM25(b *testing.B) {
	dir := b.TempDir()
	corpus(b, dir, 1000, 4096)
	cfg := bm25Config(dir)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := New(context.Background(), cfg, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchBM25 is one search of that index.
func BenchmarkSearchBM25(b *testing.B) {
	dir := b.TempDir()
	corpus(b, dir, 1000, 4096)
	t, err := New(context.Background(), bm25Config(dir), Options{})
	if err != nil {
		b.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"query": "what do blorks eat in winter near the river"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res, err := t.Call(context.Background(), exec.ToolCall{Arguments: args}); err != nil || res.IsError {
			b.Fatal(err, res.Text)
		}
	}
}
