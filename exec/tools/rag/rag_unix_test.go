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
			got, err := split(context.Background(), tt.text, tt.size, tt.overlap, tt.words, &budget{maxChunks: 100, maxBytes: 100})
			if err != nil {
				t.Fatal(err)
			}
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
	x, err := newBM25(context.Background(), chunks, 1.5, 0.75)
	if err != nil {
		t.Fatal(err)
	}
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
	docs, err := collect(context.Background(), []string{dir, "/dev/zero", "/proc/self/environ", filepath.Join(dir, "missing"), filepath.Join(dir, "*.md")}, "", []string{state}, func(s string) { skipped = append(skipped, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || filepath.Base(docs[0].path) != "a.md" {
		t.Errorf("docs %+v", docs)
	}
	joined := strings.Join(skipped, "\n")
	for _, want := range []string{"pipe.md: not a regular file", "environ is not a document", "link: it leads to /etc/passwd (symlinks resolved), outside " + dir, "key.md: it leads to", "bin.dat: binary"} {
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
	if _, err := New(context.Background(), cfg, Options{}); err == nil || !strings.Contains(err.Error(), "rag docs: bm25: chunking "+filepath.Join(dir, "a.txt")+": more than 100000 chunks: raise chunking.size") {
		t.Errorf("error %v", err)
	}
	cfg.Strategies[0] = &config.RAGStrategy{Type: "chunked-embeddings", Docs: []string{dir}, ChunkSize: 10, Dims: 4096, Limit: 5}
	embedder := func(*config.Model) (Embedder, error) { return nil, nil }
	if _, err := New(context.Background(), cfg, Options{Embedder: embedder}); err == nil || !strings.Contains(err.Error(), "numbers to keep") {
		t.Errorf("error %v", err)
	}
}

// Splitting stops at the first chunk past a bound: chunks are counted, and
// their bytes, as they are made, never after.
func TestSplitStopsAtBudget(t *testing.T) {
	text := strings.Repeat("abcdefghij", 1000)
	for _, tc := range []struct {
		name string
		b    budget
		want string
		made int
	}{
		{"chunks", budget{maxChunks: 5, maxBytes: 1 << 20}, "more than 5 chunks", 6},
		{"bytes", budget{maxChunks: 1 << 20, maxBytes: 1000}, "the chunks hold more than 1000 bytes", 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			_, err := split(context.Background(), text, 100, 10, false, &b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if b.chunks != tc.made {
				t.Errorf("made %d chunks before stopping, want %d", b.chunks, tc.made)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := split(ctx, text, 10, 0, false, &budget{maxChunks: 1 << 20, maxBytes: 1 << 20}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v", err)
	}
}

// A document's real path must lie under what its docs: entry names, named
// by glob, directory or file alike; an entry under the agent file's
// directory must really lie there.
func TestCollectConfinedToWhatIsNamed(t *testing.T) {
	top := t.TempDir()
	secret := filepath.Join(top, "secret")
	project := filepath.Join(top, "project")
	docs := filepath.Join(project, "docs")
	for _, d := range []string{secret, docs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, text string) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(secret, "id_rsa"), "PRIVATE KEY")
	write(filepath.Join(docs, "guide.md"), "guide")
	write(filepath.Join(project, "README.md"), "readme")
	link(filepath.Join(secret, "id_rsa"), filepath.Join(docs, "notes.md"))
	link("guide.md", filepath.Join(docs, "alias.md"))                           // inside: read once
	link(filepath.Join(project, "README.md"), filepath.Join(docs, "readme.md")) // outside docs/
	link(secret, filepath.Join(project, "planted"))                             // a directory out of the project
	link(filepath.Join(secret, "id_rsa"), filepath.Join(project, "key.md"))     // a file out of the project
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"glob", []string{filepath.Join(docs, "*.md")}, []string{"alias.md"}}, // guide.md read once, as alias.md
		{"directory", []string{docs}, []string{"alias.md"}},                   // guide.md read once, as alias.md
		{"file", []string{filepath.Join(docs, "notes.md"), filepath.Join(docs, "guide.md")}, []string{"guide.md"}},
		{"planted directory", []string{filepath.Join(project, "planted"), filepath.Join(project, "planted", "*")}, nil},
		{"planted file", []string{filepath.Join(project, "key.md")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var skipped []string
			got, err := collect(context.Background(), tc.paths, project, nil, func(s string) { skipped = append(skipped, s) })
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range got {
				if strings.Contains(d.text, "PRIVATE") || strings.Contains(d.text, "readme") {
					t.Errorf("read %s: %q", d.path, d.text)
				}
				names = append(names, filepath.Base(d.path))
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Errorf("read %q, want %q (skipped %q)", names, tc.want, skipped)
			}
			if len(skipped) == 0 {
				t.Errorf("nothing said skipped")
			}
			for _, s := range skipped {
				if !strings.Contains(s, "outside") {
					t.Errorf("skipped %q: want why (outside ...)", s)
				}
			}
		})
	}
}
