package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-dev/hitl/exec"
)

func testKey(s string) Key { return Key{secret: []byte(s), From: "test"} }

func sealAll(k Key, recs ...string) [][]byte {
	c := &chain{key: k}
	var out [][]byte
	for _, r := range recs {
		out = append(out, c.seal([]byte(r)))
	}
	return out
}

func TestChainRefusesTampering(t *testing.T) {
	k := testKey("0123456789abcdef")
	recs := []string{`{"kind":"header"}`, `{"kind":"message","n":1}`, `{"kind":"answer","n":2}`}
	good := sealAll(k, recs...)
	tests := []struct {
		name    string
		lines   [][]byte
		key     Key
		wantBad int // index of the first refused line, -1: all good
	}{
		{"intact", good, k, -1},
		{"other key", good, testKey("another-key-0123456"), 0},
		{"changed record", [][]byte{good[0], bytes.Replace(good[1], []byte(`"n":1`), []byte(`"n":9`), 1), good[2]}, k, 1},
		{"removed record", [][]byte{good[0], good[2]}, k, 1},
		{"reordered", [][]byte{good[0], good[2], good[1]}, k, 1},
		{"added unsigned", [][]byte{good[0], good[1], []byte(`{"kind":"approval"}`)}, k, 2},
		{"added, signed by another key", append(append([][]byte{}, good...), sealAll(testKey("attacker-key-012345"), recs[0], `{"kind":"approval"}`)[1]), k, 3},
		{"mac cut short", [][]byte{good[0][:len(good[0])-5]}, k, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &chain{key: tt.key}
			bad := -1
			for i, l := range tt.lines {
				rec, err := c.open(l)
				if err != nil {
					bad = i
					break
				}
				if i < len(recs) && tt.wantBad == -1 && string(rec) != recs[i] {
					t.Fatalf("record %d = %s, want %s", i, rec, recs[i])
				}
			}
			if bad != tt.wantBad {
				t.Errorf("first refused line = %d, want %d", bad, tt.wantBad)
			}
		})
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": dir}
	getenv := func(k string) string { return env[k] }
	k1, err := LoadKey(getenv)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hitl", "session.key")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v, %v: want mode 0600", fi, err)
	}
	k2, err := LoadKey(getenv)
	if err != nil || !bytes.Equal(k1.secret, k2.secret) {
		t.Fatalf("second load gave another key (%v)", err)
	}
	env[KeyEnv] = "short"
	if _, err := LoadKey(getenv); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("short HITL_SESSION_KEY: err = %v", err)
	}
	env[KeyEnv] = "a-long-enough-ci-secret"
	k3, err := LoadKey(getenv)
	if err != nil || string(k3.secret) != "a-long-enough-ci-secret" {
		t.Errorf("HITL_SESSION_KEY not used: %v", err)
	}
	delete(env, KeyEnv)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(getenv); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Errorf("world-readable key accepted: %v", err)
	}
}

// Records cut off the end of a journal written on this machine are
// noticed (the last MAC hitl wrote is kept in the state dir); a journal
// moved elsewhere, or longer than what was kept, still opens.
func TestJournalCutShortIsRefused(t *testing.T) {
	state := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}
	key, err := LoadKey(getenv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	j, err := Create(path, Header{RunID: "r1", Agent: "root"}, key)
	if err != nil {
		t.Fatal(err)
	}
	st := &exec.State{}
	for _, text := range []string{"one", "two", "three"} {
		st.Messages = append(st.Messages, exec.Message{Role: exec.RoleUser, Text: text})
		j.Message(st.Messages[len(st.Messages)-1], st)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(whole, []byte("\n"))

	// Intact: opens.
	j2, _, err := Open(path, key)
	if err != nil {
		t.Fatalf("intact journal refused: %v", err)
	}
	j2.Close()

	// The last record cut off: refused, naming where records are missing.
	cut := bytes.Join(lines[:3], nil)
	if err := os.WriteFile(path, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	var te *TamperedError
	if _, _, err := Open(path, key); !errors.As(err, &te) || te.Line != 4 || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("cut journal: err = %v, want a TamperedError at line 4", err)
	}

	// The same cut journal copied to another path: refused all the same
	// (the kept MAC is the run's, wherever its journal is, DESIGN §12).
	moved := filepath.Join(dir, "moved.jsonl")
	if err := os.WriteFile(moved, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(moved, key); !errors.As(err, &te) || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("cut journal copied elsewhere: err = %v, want it refused", err)
	}
	// On a machine that kept nothing for the run (another state dir), there
	// is nothing to compare: it opens.
	elsewhere := key
	elsewhere.heads = t.TempDir()
	j3, _, err := Open(moved, elsewhere)
	if err != nil {
		t.Fatalf("journal on a machine that kept nothing refused: %v", err)
	}
	j3.Close()

	// A journal longer than what was kept (hitl killed after writing
	// records, before keeping their MAC) opens.
	if err := os.WriteFile(path, whole, 0o600); err != nil {
		t.Fatal(err)
	}
	c := &chain{key: key}
	for _, l := range lines[:3] {
		if _, err := c.open(bytes.TrimSuffix(l, []byte("\n"))); err != nil {
			t.Fatal(err)
		}
	}
	key.writeHead(path, "r1", c.prev) // the MAC of record 3 of 4
	j4, _, err := Open(path, key)
	if err != nil {
		t.Fatalf("whole journal refused: %v", err)
	}
	j4.Close()
}
