package model_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
	"github.com/hitl-dev/hitl/exec/model"
	"github.com/hitl-dev/hitl/exec/model/cassette"
	"github.com/hitl-dev/hitl/internal/fakellm"
)

func TestRecordReplay(t *testing.T) {
	for _, f := range formats {
		t.Run(f.provider, func(t *testing.T) {
			const secret = "sk-very-secret-key-123"
			srv := fakellm.New(f.format,
				fakellm.Reply{Status: 429, Header: map[string]string{"retry-after-ms": "1"}}, // retried, not recorded
				fakellm.Reply{Text: []string{"Checking"}, Calls: []fakellm.Call{{ID: "c1", Name: "shell", Args: []string{`{"cmd":`, `"ls"}`}}}, InTokens: 10, OutTokens: 5, Header: map[string]string{"Set-Cookie": "session=" + secret}},
				fakellm.Reply{Text: []string{"All ", "good."}, InTokens: 20, OutTokens: 3},
			)
			path := filepath.Join(t.TempDir(), "run.cassette")
			cfg := &config.Model{Name: "m", Provider: f.provider, Model: "test-model", BaseURL: srv.URL + "/v1?key=" + secret}

			// Conversation: two turns, the second after the tool result.
			run := func(m exec.Model) ([]exec.Turn, error) {
				req := request()
				var turns []exec.Turn
				for i := 0; i < 2; i++ {
					tr, err := m.Turn(context.Background(), req)
					if err != nil {
						return turns, err
					}
					turns = append(turns, tr)
					req.Messages = append(req.Messages, tr.Message)
					for _, c := range tr.Message.ToolCalls {
						req.Messages = append(req.Messages, exec.Message{Role: exec.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Text: "a.txt"})
					}
				}
				return turns, nil
			}

			before := time.Now().Add(-time.Second)
			rec, err := cassette.Record(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			o := fastOpts(env(map[string]string{f.keyVar: secret}))
			o.Cassette = rec
			m, err := model.New(cfg, o)
			if err != nil {
				t.Fatal(err)
			}
			recorded, err := run(m)
			if err != nil {
				t.Fatal(err)
			}
			recordedAt := rec.Now()
			if recordedAt.Before(before) || recordedAt.After(time.Now()) {
				t.Errorf("recording time %v", recordedAt)
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			srv.Close()
			if n := len(srv.Requests()); n != 3 {
				t.Fatalf("%d requests while recording", n)
			}

			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if testing.Verbose() && os.Getenv("SHOW_CASSETTE") != "" {
				t.Logf("cassette:\n%s", data)
			}
			for _, bad := range []string{secret, "Authorization", "authorization", "X-Api-Key", "x-api-key", "Set-Cookie", "User-Agent", "X-Stainless"} {
				if strings.Contains(string(data), bad) {
					t.Errorf("cassette contains %q", bad)
				}
			}
			if strings.Count(string(data), "\n    - id: ") != 2 || strings.Count(string(data), "code: 200") != 2 || strings.Contains(string(data), "code: 429") {
				t.Errorf("cassette should hold exactly the two 2xx exchanges:\n%s", data)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("cassette mode %v", fi.Mode().Perm())
			}

			// Replay: no server, no key, same turns, same clock.
			rp, err := cassette.Replay(path)
			if err != nil {
				t.Fatal(err)
			}
			defer rp.Close()
			if !rp.Now().Equal(recordedAt) {
				t.Errorf("replay clock %v, recorded %v", rp.Now(), recordedAt)
			}
			o = model.Options{Getenv: env(nil), Cassette: rp}
			m, err = model.New(cfg, o)
			if err != nil {
				t.Fatalf("replay needs no key: %v", err)
			}
			replayed, err := run(m)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(replayed, recorded) {
				t.Errorf("replayed %+v\nrecorded %+v", replayed, recorded)
			}
			// A third turn was never recorded.
			_, err = m.Turn(context.Background(), request())
			var miss *cassette.MissError
			if !errors.As(err, &miss) || miss.Turn != 3 || !strings.Contains(err.Error(), "the cassette has no turn 3") {
				t.Errorf("err = %v", err)
			}
			t.Logf("miss: %v", err)

			// A different conversation misses at its first turn.
			rp2, err := cassette.Replay(path)
			if err != nil {
				t.Fatal(err)
			}
			m, _ = model.New(cfg, model.Options{Getenv: env(nil), Cassette: rp2})
			req := request()
			req.System = "You are another test."
			_, err = m.Turn(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), "the cassette has no turn 1") {
				t.Errorf("err = %v", err)
			}
			t.Logf("miss: %v", err)
		})
	}
}

func TestReplayMissingFile(t *testing.T) {
	_, err := cassette.Replay(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil {
		t.Fatal("no error")
	}
}

func TestRecordSavesAsItGoes(t *testing.T) {
	srv := fakellm.New(fakellm.OpenAI, fakellm.Reply{Text: []string{"one"}}, fakellm.Reply{Status: 401, Message: "revoked"})
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "c.yaml")
	rec, err := cassette.Record(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := fastOpts(env(map[string]string{"OPENAI_API_KEY": "k"}))
	o.Cassette = rec
	m := newModel(t, "openai", srv.URL, o)
	if _, err := m.Turn(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Turn(context.Background(), request()); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("err = %v", err)
	}
	// Without Close (a crash), the file already holds the first turn only.
	data, _ := os.ReadFile(path)
	if strings.Count(string(data), "code: 200") != 1 || strings.Contains(string(data), "revoked") {
		t.Errorf("cassette:\n%s", data)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}
