package receipt

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// hitl receipts verify refuses what ssh-keygen -Y verify refuses, for the
// same allowed-signers file: the same verdict on every row.
func TestVerifyAgreesWithSSHKeygen(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen is not installed: the comparison needs the real one")
	}
	alice, other := newSigner(t), newSigner(t)
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(alice.PublicKey())))
	otherKey := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(other.PublicKey())))
	signed := receipts(t, "run-1", alice, 1)[0]
	dir := t.TempDir()
	data, sig := filepath.Join(dir, "receipt.json"), filepath.Join(dir, "receipt.json.sig")
	if err := os.WriteFile(data, signed.Raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sig, []byte(signed.Signature), 0o600); err != nil {
		t.Fatal(err)
	}
	const who = "alice@example.com"
	rows := []struct{ name, file string }{
		{"plain", who + " " + key},
		{"expired", who + ` valid-before="20200101" ` + key},
		{"expired, UTC with a time", who + ` valid-before="20200101120000Z" ` + key},
		{"not yet valid", who + ` valid-after="29990101" ` + key},
		{"within its window", who + ` valid-after="20200101",valid-before="29990101Z" ` + key},
		{"another namespace", who + ` namespaces="git" ` + key},
		{"namespaces holding hitl-receipt", who + ` namespaces="git,hitl-receipt" ` + key},
		{"a namespace pattern", who + ` namespaces="hitl-*" ` + key},
		{"a certificate authority", who + ` cert-authority ` + key},
		{"another key", who + " " + otherKey},
		{"an expired line, then a valid one", who + ` valid-before="20200101" ` + key + "\n" + who + " " + key},
		{"an unknown option", who + ` no-such-option ` + key},
		{"a bad date", who + ` valid-before="2020" ` + key},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			allowed := filepath.Join(t.TempDir(), "allowed_signers")
			if err := os.WriteFile(allowed, []byte(row.file+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(keygen, "-Y", "verify", "-f", allowed, "-I", who, "-n", Namespace, "-s", sig)
			cmd.Stdin = bytes.NewReader(signed.Raw)
			out, kerr := cmd.CombinedOutput()
			keygenOK := kerr == nil

			hitlOK := false
			var why error
			f, err := os.Open(allowed)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			signers, why := ParseAllowedSigners(f)
			if why == nil {
				c := Verify([]Signed{signed}, "run-1", signers)[0]
				hitlOK, why = c.Err == nil, c.Err
				if hitlOK && c.Principal != who {
					t.Errorf("signed by %q, want %s", c.Principal, who)
				}
			}
			if hitlOK != keygenOK {
				t.Errorf("hitl says ok=%v (%v); ssh-keygen says ok=%v: %s", hitlOK, why, keygenOK, out)
			}
		})
	}
}
