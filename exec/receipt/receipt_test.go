package receipt

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/hitl-dev/hitl/prompt"
)

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// receipts writes n consent answers of run as w would.
func receipts(t *testing.T, run string, signer ssh.Signer, n int) []Signed {
	t.Helper()
	var out []Signed
	w := &Writer{RunID: run, Signer: signer, Who: func(prompt.Question, prompt.Answer) string { return "alice" }, Record: func(s Signed) { out = append(out, s) }}
	for i := range n {
		q := prompt.ApprovalQuestion("Run this command?", true)
		q.ID, q.Tool, q.Subject, q.Dir = "p"+string(rune('1'+i)), "shell", "make deploy", "/srv"
		w.Answered(q, prompt.Answer{Action: prompt.Accept, Content: json.RawMessage(`"once"`), Source: prompt.SourceTTY})
	}
	// A question that grants nothing makes no receipt.
	w.Answered(prompt.Question{ID: "p9", Kind: prompt.KindText}, prompt.Answer{Action: prompt.Accept})
	return out
}

func TestVerify(t *testing.T) {
	alice, mallory := newSigner(t), newSigner(t)
	allowed := []Signer{{Principals: []string{"alice@example.com"}, Key: alice.PublicKey()}}
	good := receipts(t, "run-1", alice, 3)
	if len(good) != 3 {
		t.Fatalf("%d receipts, want 3", len(good))
	}
	swapped := []Signed{good[1], good[0], good[2]}
	tests := []struct {
		name     string
		receipts []Signed
		run      string
		allowed  []Signer
		want     []string // per receipt: "" good, else the error's start
	}{
		{"good", good, "run-1", allowed, []string{"", "", ""}},
		{"moved to another run", good, "run-2", allowed, []string{"it belongs to run run-1", "it belongs to run run-1", "it belongs to run run-1"}},
		{"out of order", swapped, "run-1", allowed, []string{"it is number 2, in place 1", "it is number 1, in place 2", "the chain is broken"}},
		{"removed from the middle", []Signed{good[0], good[2]}, "run-1", allowed, []string{"", "it is number 3, in place 2"}},
		{"another signer", receipts(t, "run-1", mallory, 1), "run-1", allowed, []string{"signed by SHA256:"}},
		{"unsigned", receipts(t, "run-1", nil, 1), "run-1", allowed, []string{"it is not signed"}},
		{"signer not for this namespace", good[:1], "run-1", []Signer{{Principals: []string{"a"}, Key: alice.PublicKey(), Namespaces: []string{"git"}}}, []string{"signed by SHA256:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks := Verify(tt.receipts, tt.run, tt.allowed)
			for i, c := range checks {
				switch {
				case tt.want[i] == "" && c.Err != nil:
					t.Errorf("receipt %d: %v", i+1, c.Err)
				case tt.want[i] != "" && (c.Err == nil || !strings.HasPrefix(c.Err.Error(), tt.want[i])):
					t.Errorf("receipt %d: %v, want %q", i+1, c.Err, tt.want[i])
				}
			}
		})
	}
	// A changed receipt no longer matches its signature.
	changed := Signed{Raw: []byte(strings.Replace(string(good[0].Raw), "make deploy", "make nuke", 1)), Signature: good[0].Signature}
	if c := Verify([]Signed{changed}, "run-1", allowed)[0]; c.Err == nil || !strings.Contains(c.Err.Error(), "does not match") {
		t.Errorf("a changed receipt: %v", c.Err)
	}
}

func TestParseAllowedSigners(t *testing.T) {
	s := newSigner(t)
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey())))
	got, err := ParseAllowedSigners(strings.NewReader("# team\nalice@example.com,ops@example.com namespaces=\"hitl-receipt,git\" " + key + " alice\n\nbob@example.com " + key + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Principals[1] != "ops@example.com" || strings.Join(got[0].Namespaces, ",") != "hitl-receipt,git" || got[1].Namespaces != nil {
		t.Errorf("got %+v", got)
	}
	for _, bad := range []string{"", "alice@example.com\n", "alice@example.com ssh-ed25519 AAAA-not-base64\n"} {
		if _, err := ParseAllowedSigners(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
