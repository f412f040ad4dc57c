package session

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KeyEnv names the variable holding the key that authenticates sessions,
// so a session can move to another machine (a CI secret).
const KeyEnv = "HITL_SESSION_KEY"

// minKeyLen is the shortest HITL_SESSION_KEY accepted.
const minKeyLen = 16

// Key authenticates the records of a journal (DESIGN §5: a session carries
// no authority of its own).
type Key struct {
	secret []byte
	// From says where the key came from, for errors.
	From string
	// heads is where the last MAC of each journal written here is kept
	// ("": not kept), so records cut off a journal's end are noticed.
	heads string
}

// LoadKey returns HITL_SESSION_KEY when set, else the random key kept in
// the state directory (made on first use, mode 0600).
func LoadKey(getenv func(string) string) (Key, error) {
	dir, dirErr := DefaultDir(getenv)
	heads := ""
	if dirErr == nil {
		heads = filepath.Join(filepath.Dir(dir), "heads")
	}
	if v := getenv(KeyEnv); v != "" {
		if len(v) < minKeyLen {
			return Key{}, fmt.Errorf("%s is %d characters long; use at least %d (a random value, e.g. from openssl rand -hex 32)", KeyEnv, len(v), minKeyLen)
		}
		return Key{secret: []byte(v), From: KeyEnv, heads: heads}, nil
	}
	if dirErr != nil {
		return Key{}, dirErr
	}
	path := filepath.Join(filepath.Dir(dir), "session.key")
	k, err := readKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		k, err = makeKey(path)
	}
	if err != nil {
		return Key{}, err
	}
	return Key{secret: k, From: path, heads: heads}, nil
}

// headPath is where the last MAC of the journal of run runID is kept:
// keyed by the run alone, so a journal cut short is refused wherever it
// was copied to (DESIGN §12), not only at the path it was written to.
func (k Key) headPath(_, runID string) string {
	if k.heads == "" || runID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("run\x00" + runID))
	return filepath.Join(k.heads, hex.EncodeToString(sum[:16]))
}

// readHead returns the last MAC hitl wrote to the journal at path on this
// machine, or nil when it kept none (a journal moved here, or written with
// another state dir).
func (k Key) readHead(path, runID string) []byte {
	hp := k.headPath(path, runID)
	if hp == "" {
		return nil
	}
	data, err := os.ReadFile(hp)
	if err != nil {
		return nil
	}
	mac, err := hex.DecodeString(string(bytes.TrimSpace(data)))
	if err != nil || len(mac) != sha256.Size {
		return nil
	}
	return mac
}

// writeHead keeps mac as the last MAC of the journal at path (best effort:
// without it, only a cut-off end goes unnoticed).
func (k Key) writeHead(path, runID string, mac []byte) {
	hp := k.headPath(path, runID)
	if hp == "" || mac == nil {
		return
	}
	if os.MkdirAll(filepath.Dir(hp), 0o700) != nil {
		return
	}
	tmp := hp + ".tmp"
	if os.WriteFile(tmp, []byte(hex.EncodeToString(mac)+"\n"), 0o600) != nil || os.Rename(tmp, hp) != nil {
		os.Remove(tmp)
	}
}

// removeHead forgets the journal of run runID at path (deleted).
func (k Key) removeHead(path, runID string) {
	if hp := k.headPath(path, runID); hp != "" {
		os.Remove(hp)
	}
}

func readKey(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("session key %s must be a regular file of mode 0600 (it is %v): fix it with chmod 600, or remove it to make a new one (kept sessions then no longer resume)", path, fi.Mode())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	k, err := hex.DecodeString(string(bytes.TrimSpace(data)))
	if err != nil || len(k) < minKeyLen {
		return nil, fmt.Errorf("session key %s is damaged: remove it to make a new one (kept sessions then no longer resume)", path)
	}
	return k, nil
}

func makeKey(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readKey(path) // another hitl made it first
	}
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	_, err = f.WriteString(hex.EncodeToString(k) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("session key: %w", err)
	}
	return k, nil
}

// macField ends every authenticated record: the record's JSON object with
// this member added last.
const macField = `,"mac":"`

// chain authenticates the records of one journal in order: each record's
// MAC covers the previous record's MAC and the record's bytes, so a record
// added, changed, removed or reordered breaks every MAC after it.
type chain struct {
	key  Key
	prev []byte
	// seen are the MACs of the records read (to tell whether the last MAC
	// hitl wrote to this journal here is among them).
	seen map[string]bool
	// runID is the journal's run (its header's), for its head file.
	runID string
}

func (c *chain) mac(rec []byte) []byte {
	h := hmac.New(sha256.New, c.key.secret)
	h.Write(c.prev)
	h.Write(rec)
	return h.Sum(nil)
}

// seal returns the line for the JSON object rec: rec with its MAC as the
// last member.
func (c *chain) seal(rec []byte) []byte {
	m := c.mac(rec)
	c.prev = m
	line := make([]byte, 0, len(rec)+len(macField)+2*len(m)+3)
	line = append(line, rec[:len(rec)-1]...)
	line = append(line, macField...)
	line = hex.AppendEncode(line, m)
	line = append(line, '"', '}')
	return line
}

// errBadMAC is a record whose MAC does not verify.
var errBadMAC = errors.New("its authentication code does not match")

// open checks a sealed line and returns the record it carries.
func (c *chain) open(line []byte) ([]byte, error) {
	const hexLen = 2 * sha256.Size
	n := len(line) - hexLen - 2
	if n < len(macField)+1 || !bytes.HasSuffix(line, []byte(`"}`)) || !bytes.Equal(line[n-len(macField):n], []byte(macField)) {
		return nil, errors.New("it carries no authentication code")
	}
	got, err := hex.DecodeString(string(line[n : n+hexLen]))
	if err != nil {
		return nil, errors.New("its authentication code is damaged")
	}
	rec := make([]byte, 0, n-len(macField)+1)
	rec = append(rec, line[:n-len(macField)]...)
	rec = append(rec, '}')
	want := c.mac(rec)
	if !hmac.Equal(got, want) {
		return nil, errBadMAC
	}
	c.prev = want
	if c.seen != nil {
		c.seen[string(want)] = true
	}
	return rec, nil
}

// TamperedError is a journal whose records do not verify: a record added,
// changed, removed or reordered, or a session written with another key.
// Nothing in it is used (--force does not override it).
type TamperedError struct {
	Path    string
	Line    int // the first bad record, 1-based
	Reason  string
	KeyFrom string
}

func (e *TamperedError) Error() string {
	return fmt.Sprintf("session %s:%d: refused: %s (the record was added, changed, moved or removed after hitl wrote it, or the session was written with another key than %s; a session written elsewhere resumes here with the %s it was written with)", e.Path, e.Line, e.Reason, e.KeyFrom, KeyEnv)
}
