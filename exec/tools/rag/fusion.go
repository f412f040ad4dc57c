package rag

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

// fuse combines the strategies' results (by type), as cagent does: rrf
// (Σ 1/(k+rank)), max (the best score) or weighted (Σ score·weight);
// a chunk is its path and index.
func fuse(res config.RAGResults, byType []string, lists [][]hit) ([]hit, error) {
	if len(lists) == 1 {
		return lists[0], nil
	}
	type acc struct {
		h     hit
		score float64
	}
	seen := map[string]*acc{}
	var order []string
	for li, list := range lists {
		for rank, h := range list {
			key := fmt.Sprintf("%s_%d", h.path, h.index)
			a := seen[key]
			if a == nil {
				a = &acc{h: h}
				seen[key] = a
				order = append(order, key)
			}
			switch res.Fusion {
			case "max":
				a.score = max(a.score, h.score)
			case "weighted":
				w, ok := res.Weights[byType[li]]
				if !ok {
					return nil, fmt.Errorf("fusion weighted has no weight for strategy %s", byType[li])
				}
				a.score += h.score * w
			default:
				a.score += 1 / (res.FusionK + float64(rank+1))
			}
		}
	}
	out := make([]hit, 0, len(order))
	for _, k := range order {
		a := seen[k]
		a.h.score = a.score
		out = append(out, a.h)
	}
	sortHits(out)
	return out, nil
}

var firstObject = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)\{.*\}`) })

// rerank asks m to score each of the first topK hits for query (0 to 1,
// JSON {"scores":[…]}), drops those under threshold, and sorts again;
// hits past topK keep their scores. A model that answers badly leaves the
// order as it was (said through warn), as in cagent.
func rerank(ctx context.Context, m exec.Model, rr *config.RAGRerank, query string, hits []hit, topK int, warn func(string)) []hit {
	if len(hits) == 0 {
		return hits
	}
	n := min(topK, len(hits))
	if n <= 0 {
		n = len(hits)
	}
	var docs strings.Builder
	fmt.Fprintf(&docs, "Query:\n%s\n\nDocuments:\n", query)
	for i, h := range hits[:n] {
		fmt.Fprintf(&docs, "[%d] (source: %s):\n%s\n\n", i, h.path, h.text)
	}
	system := "You score how relevant each document is to the query, from 0 (irrelevant) to 1 (exactly what is asked). "
	if rr.Criteria != "" {
		system += "Criteria:\n" + rr.Criteria + "\n"
	}
	system += fmt.Sprintf(`Answer with JSON {"scores": [...]} holding exactly %d numbers, one per document, in order.`, n)
	schema := json.RawMessage(`{"type":"object","properties":{"scores":{"type":"array","items":{"type":"number"}}},"required":["scores"],"additionalProperties":false}`)
	turn, err := m.Turn(ctx, exec.Request{System: system, Messages: []exec.Message{{Role: exec.RoleUser, Text: docs.String()}},
		Output: &exec.OutputFormat{Name: "rerank_scores", Schema: schema}})
	if err != nil {
		warn(fmt.Sprintf("reranking failed, the results keep their order: %v", err))
		return hits
	}
	var got struct {
		Scores []float64 `json:"scores"`
	}
	text := firstObject().FindString(turn.Message.Text)
	if json.Unmarshal([]byte(text), &got) != nil || len(got.Scores) != n {
		warn(fmt.Sprintf("reranking: the model did not answer %d scores, the results keep their order", n))
		return hits
	}
	var out []hit
	for i, h := range hits[:n] {
		h.score = got.Scores[i]
		if rr.Threshold > 0 && h.score < rr.Threshold {
			continue
		}
		out = append(out, h)
	}
	out = append(out, hits[n:]...)
	sortHits(out)
	return out
}
