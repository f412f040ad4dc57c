package model

import (
	"slices"
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/configcheck"
)

// Every model a file names hides its key from commands: a toolset's
// model:, a model_picker's, a rag strategy's and reranking's.
func TestKeyVarsEveryModelReference(t *testing.T) {
	src := `providers:
  corp: {api_type: openai_chatcompletions, base_url: "https://corp.example/v1", token_key: CORP_KEY}
models:
  emb: {provider: openai, model: e, token_key: EMB_KEY}
  judge: {provider: openai, model: j, token_key: JUDGE_KEY}
agents:
  root:
    model: openai/gpt-4o
    toolsets:
      - {type: think, model: corp/fast}
      - {type: model_picker, models: [mistral/mistral-small-latest]}
    rag: [kb]
rag:
  kb:
    docs: [x]
    strategies: [{type: chunked-embeddings, embedding_model: emb, vector_dimensions: 8}]
    results: {reranking: {model: judge}}
`
	cfg, err := config.Parse("a.yaml", []byte(src), func(string) (string, bool) { return "x", true }, configcheck.Checks())
	if err != nil {
		t.Fatal(err)
	}
	got := KeyVars(cfg)
	for _, want := range []string{"CORP_KEY", "MISTRAL_API_KEY", "EMB_KEY", "JUDGE_KEY"} {
		if !slices.Contains(got, want) {
			t.Errorf("KeyVars %v lacks %s", got, want)
		}
	}
}
