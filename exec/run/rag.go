package run

import (
	"path/filepath"
	"sync"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/exec/tools/rag"
)

// ragIndexes are the run's rag tools, each entry indexed once whichever
// agents name it.
type ragIndexes struct {
	mu    sync.Mutex
	tools map[*config.RAG]*rag.Tool
}

// ragTool is the tool of rag entry c, indexing its documents the first
// time (through the run's model providers and cassette).
func (r *Run) ragTool(c *config.RAG) (exec.Tool, error) {
	r.rag.mu.Lock()
	defer r.rag.mu.Unlock()
	if t := r.rag.tools[c]; t != nil {
		return t, nil
	}
	mo := model.Options{Getenv: r.opts.Getenv, Cassette: r.opts.Cassette, Sandbox: r.runSandbox, Track: r.track}
	t, err := rag.New(r.team.ctx, c, rag.Options{
		Embedder: func(m *config.Model) (rag.Embedder, error) { return model.NewEmbedder(m, mo) },
		Chat:     func(m *config.Model) (exec.Model, error) { return model.New(m, mo) },
		Notice:   func(msg string) { r.notice("%s", msg) },
		Deny:     StateDirs(r.getenv),
	})
	if err != nil {
		return nil, err
	}
	if r.rag.tools == nil {
		r.rag.tools = map[*config.RAG]*rag.Tool{}
	}
	r.rag.tools[c] = t
	return t, nil
}

// StateDirs are hitl's own directories (the session key, the journals):
// nothing of them is read as a document.
func StateDirs(getenv func(string) string) []string {
	dir, err := session.DefaultDir(getenv)
	if err != nil {
		return nil
	}
	state := filepath.Dir(dir)
	if real, err := filepath.EvalSymlinks(state); err == nil {
		state = real
	}
	return []string{state}
}
