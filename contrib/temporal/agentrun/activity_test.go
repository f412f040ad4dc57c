package agentrun

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A journal past the inline limit goes to the store, whole, by its
// SHA-256; the next step brings it back from there. A journal in history
// that the store's extends (records a killed attempt wrote after) keeps the
// store's; one that does not is replaced by history's.
func TestJournalTravelsInlineOrThroughTheStore(t *testing.T) {
	a := &Activities{Store: t.TempDir(), InlineLimit: 64}
	path := a.journalPath("run/1")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	small := []byte(`{"kind":"header"}` + "\n")
	big := bytes.Repeat([]byte(`{"kind":"message","text":"xxxxxxxxxxxxxxxx"}`+"\n"), 100)
	for _, tc := range []struct {
		name   string
		data   []byte
		inline bool
	}{{"small", small, true}, {"big", big, false}} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			j, err := a.keep(path)
			if err != nil {
				t.Fatal(err)
			}
			if (j.Data != nil) != tc.inline || (j.Ref != "") == tc.inline || j.Size != int64(len(tc.data)) {
				t.Fatalf("journal %+v", j)
			}
			os.Remove(path)
			if have, err := a.bring(path, j); err != nil || !have {
				t.Fatalf("bring: %v, %v", have, err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, tc.data) {
				t.Fatalf("brought back %d bytes, want %d", len(got), len(tc.data))
			}
		})
	}

	// The store's copy extends history's: kept.
	longer := append(append([]byte{}, small...), `{"kind":"call_start"}`+"\n"...)
	os.WriteFile(path, longer, 0o600)
	if _, err := a.bring(path, Journal{Data: small, SHA256: sha(small)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, longer) {
		t.Errorf("the records a killed attempt wrote were lost: %q", got)
	}
	// Another journal at the path: history's wins.
	os.WriteFile(path, []byte("other\n"), 0o600)
	a.bring(path, Journal{Data: small})
	if got, _ := os.ReadFile(path); !bytes.Equal(got, small) {
		t.Errorf("history's journal did not replace another: %q", got)
	}
	// A damaged or missing journal is refused, not retried.
	if _, err := a.bring(path, Journal{Data: small, SHA256: sha(big)}); err == nil || !strings.Contains(err.Error(), "does not match its SHA-256") {
		t.Errorf("damaged: %v", err)
	}
	if _, err := a.bring(path, Journal{Ref: "nope.jsonl"}); err == nil || !strings.Contains(err.Error(), "workers share their --store") {
		t.Errorf("missing: %v", err)
	}
}
