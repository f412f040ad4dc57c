package rag

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hitl-dev/hitl/config"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name          string
		text          string
		size, overlap int
		words         bool
		want          []string
	}{
		{"one chunk", "hello world", 100, 10, true, []string{"hello world"}},
		{"runes not bytes", "ééééé", 2, 0, false, []string{"éé", "éé", "é"}},
		{"overlap", "abcdefghij", 4, 2, false, []string{"abcd", "cdef", "efgh", "ghij"}},
		{"overlap too big is halved", "abcdefgh", 4, 9, false, []string{"abcd", "cdef", "efgh"}},
		{"word boundaries", "alpha beta gamma delta", 8, 0, true, []string{"alpha", "beta", "gamma", "delta"}},
		{"empty", "   ", 10, 2, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := split(tt.text, tt.size, tt.overlap, tt.words)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("split %q = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestTerms(t *testing.T) {
	got := strings.Join(terms("The Blorks, (of winter) eat: MOSS and bark! an ox"), " ")
	if got != "blorks winter eat moss bark" {
		t.Errorf("terms %q", got)
	}
}

func TestBM25(t *testing.T) {
	chunks := []chunk{
		{path: "a", text: "blorks eat moss in winter"},
		{path: "b", text: "rivers and trout and mountains"},
		{path: "c", text: "moss moss moss grows on stones"},
	}
	x := newBM25(chunks, 1.5, 0.75)
	hits, err := x.search("moss winter", 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].path != "a" || hits[1].path != "c" {
		t.Errorf("hits %+v", hits)
	}
	for _, h := range hits {
		if h.score <= 0 || h.score > 1 || math.IsNaN(h.score) {
			t.Errorf("score %v out of (0, 1]", h.score)
		}
	}
	if _, err := x.search("the and of", 0, 5); !errors.Is(err, errNoTerms) {
		t.Errorf("stopwords only: %v", err)
	}
	if hits, _ := x.search("moss winter", 0.99, 5); len(hits) != 0 {
		t.Errorf("threshold kept %+v", hits)
	}
}

func TestFuse(t *testing.T) {
	a := []hit{{chunk: chunk{path: "x"}, score: 0.9}, {chunk: chunk{path: "y"}, score: 0.5}}
	b := []hit{{chunk: chunk{path: "y"}, score: 0.8}, {chunk: chunk{path: "z"}, score: 0.1}}
	tests := []struct {
		fusion string
		first  string
		score  float64
	}{
		{"rrf", "y", 1.0/62 + 1.0/61},
		{"max", "x", 0.9},
		{"weighted", "y", 0.5*1 + 0.8*2},
	}
	for _, tt := range tests {
		t.Run(tt.fusion, func(t *testing.T) {
			res := config.RAGResults{Fusion: tt.fusion, FusionK: 60, Weights: map[string]float64{"bm25": 1, "chunked-embeddings": 2}}
			got, err := fuse(res, []string{"bm25", "chunked-embeddings"}, [][]hit{a, b})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || got[0].path != tt.first || math.Abs(got[0].score-tt.score) > 1e-9 {
				t.Errorf("fused %+v", got)
			}
		})
	}
	if _, err := fuse(config.RAGResults{Fusion: "weighted"}, []string{"bm25", "x"}, [][]hit{a, b}); err == nil {
		t.Error("weighted without weights: no error")
	}
}

// Documents that are not files to read are skipped, never read: a
// directory's symlinks, devices, FIFOs; binary files; files over the bound.
func TestCollectSkips(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "hello")
	write("bin.dat", "a\x00b")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(".git/config", "secret")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	var skipped []string
	state := t.TempDir()
	if err := os.WriteFile(filepath.Join(state, "session.key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(state, "session.key"), filepath.Join(dir, "key.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/environ", filepath.Join(dir, "env.md")); err != nil {
		t.Fatal(err)
	}
	docs, err := collect([]string{dir, "/dev/zero", "/proc/self/environ", filepath.Join(dir, "missing"), filepath.Join(dir, "*.md")}, []string{state}, func(s string) { skipped = append(skipped, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || filepath.Base(docs[0].path) != "a.md" {
		t.Errorf("docs %+v", docs)
	}
	joined := strings.Join(skipped, "\n")
	for _, want := range []string{"pipe.md: not a regular file", "environ is not a document", "session.key is not a document"} {
		if !strings.Contains(joined, want) {
			t.Errorf("skipped %q, want %q among them", skipped, want)
		}
	}
}

// An index past its bounds is an error before anything is embedded.
func TestIndexBounded(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(strings.Repeat("word ", 60000)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &config.RAG{Name: "docs", Strategies: []*config.RAGStrategy{{Type: "bm25", Docs: []string{dir}, ChunkSize: 2, ChunkOverlap: 0, Limit: 5}}}
	if _, err := New(context.Background(), cfg, Options{}); err == nil || !strings.Contains(err.Error(), "more than 100000: raise chunking.size") {
		t.Errorf("error %v", err)
	}
	cfg.Strategies[0] = &config.RAGStrategy{Type: "chunked-embeddings", Docs: []string{dir}, ChunkSize: 10, Dims: 4096, Limit: 5}
	embedder := func(*config.Model) (Embedder, error) { return nil, nil }
	if _, err := New(context.Background(), cfg, Options{Embedder: embedder}); err == nil || !strings.Contains(err.Error(), "numbers to keep") {
		t.Errorf("error %v", err)
	}
}
