package receipt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Signer is one line of an allowed-signers file (ssh-keygen(1), the file
// git's SSH commit signing uses): who may sign, with which key, for which
// namespaces and when. What ssh-keygen -Y verify refuses, Verify refuses.
type Signer struct {
	Principals []string
	Key        ssh.PublicKey
	Namespaces []string // empty: any
	// ValidAfter and ValidBefore bound when the key may sign (zero:
	// unbounded), checked against the time of verifying, as ssh-keygen.
	ValidAfter, ValidBefore time.Time
	// CertAuthority: the key is a CA, trusted for the certificates it
	// signed, not to sign itself. hitl verifies no certificates, so such
	// a line never lets a signature through.
	CertAuthority bool
	Line          int
}

// ParseAllowedSigners reads an allowed-signers file.
func ParseAllowedSigners(r io.Reader) ([]Signer, error) {
	var out []Signer
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		principals, rest, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("line %d: expected principals, then a key", n)
		}
		key, _, options, _, err := ssh.ParseAuthorizedKey([]byte(strings.TrimSpace(rest)))
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		s := Signer{Principals: strings.Split(principals, ","), Key: key, Line: n}
		for _, o := range options {
			if err := s.option(o); err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no signers in the file")
	}
	return out, nil
}

// option reads one option of an allowed-signers line (those ssh-keygen
// knows; any other is an error, as there).
func (s *Signer) option(o string) error {
	name, v, hasValue := strings.Cut(o, "=")
	v = strings.Trim(v, `"`)
	var err error
	switch strings.ToLower(name) {
	case "cert-authority":
		s.CertAuthority = true
	case "namespaces":
		s.Namespaces = strings.Split(v, ",")
	case "valid-after":
		s.ValidAfter, err = signerTime(v)
	case "valid-before":
		s.ValidBefore, err = signerTime(v)
	default:
		return fmt.Errorf("unknown option %q: expected cert-authority, namespaces=, valid-after= or valid-before=", name)
	}
	if err != nil || (name != "cert-authority" && !hasValue) {
		return fmt.Errorf("option %s: expected a date YYYYMMDD[HHMM[SS]][Z]", o)
	}
	return err
}

// signerTime reads an allowed-signers time: YYYYMMDD, YYYYMMDDHHMM or
// YYYYMMDDHHMMSS, in UTC with a trailing Z, else local time (ssh-keygen).
func signerTime(v string) (time.Time, error) {
	loc := time.Local
	if t, ok := strings.CutSuffix(v, "Z"); ok {
		v, loc = t, time.UTC
	}
	for _, layout := range []string{"20060102", "200601021504", "20060102150405"} {
		if len(v) == len(layout) {
			return time.ParseInLocation(layout, v, loc)
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date", v)
}

// Check is the verdict on one receipt.
type Check struct {
	Receipt   Receipt
	Principal string // who signed it (an allowed signer's first principal)
	Err       error
}

// Verify checks every receipt of a session: it belongs to runID (a
// receipt moved from another session is refused), the chain of hashes is
// whole, and each signature is good and made by an allowed signer for the
// namespace hitl-receipt.
func Verify(receipts []Signed, runID string, allowed []Signer) []Check {
	out := make([]Check, len(receipts))
	prev := ""
	for i, s := range receipts {
		c := &out[i]
		if err := json.Unmarshal(s.Raw, &c.Receipt); err != nil {
			c.Err = fmt.Errorf("not a receipt: %v", err)
			prev = Hash(s.Raw)
			continue
		}
		r := c.Receipt
		switch {
		case r.RunID != runID:
			c.Err = fmt.Errorf("it belongs to run %s, not this session's %s", r.RunID, runID)
		case r.Seq != i+1:
			c.Err = fmt.Errorf("it is number %d, in place %d", r.Seq, i+1)
		case r.Prev != prev:
			c.Err = fmt.Errorf("the chain is broken: it follows %.12s…, the receipt before it hashes to %.12s…", r.Prev, prev)
		case s.Signature == "":
			c.Err = fmt.Errorf("it is not signed")
		default:
			c.Principal, c.Err = verifySignature(s, allowed)
		}
		prev = Hash(s.Raw)
	}
	return out
}

func verifySignature(s Signed, allowed []Signer) (string, error) {
	sig, err := sshsig.Unarmor([]byte(s.Signature))
	if err != nil {
		return "", fmt.Errorf("a damaged signature: %v", err)
	}
	if sig.Namespace != Namespace {
		return "", fmt.Errorf("signed for namespace %q, not %s", sig.Namespace, Namespace)
	}
	if _, ok := sig.PublicKey.(*ssh.Certificate); ok {
		return "", fmt.Errorf("signed with a certificate: hitl verifies signatures by allowed keys only (cert-authority lines are not supported)")
	}
	now := time.Now()
	var refused error
	for _, a := range allowed {
		if a.CertAuthority || !bytes.Equal(a.Key.Marshal(), sig.PublicKey.Marshal()) {
			// A CA key is trusted for certificates, never its own
			// signatures (ssh-keygen).
			continue
		}
		if len(a.Namespaces) > 0 && !matchAny(a.Namespaces, Namespace) {
			continue
		}
		switch {
		case !a.ValidBefore.IsZero() && !now.Before(a.ValidBefore):
			refused = fmt.Errorf("signed by %s, whose allowed-signers line %d has expired (valid-before %s)", a.Principals[0], a.Line, a.ValidBefore.Format(time.RFC3339))
			continue
		case !a.ValidAfter.IsZero() && now.Before(a.ValidAfter):
			refused = fmt.Errorf("signed by %s, whose allowed-signers line %d is not yet valid (valid-after %s)", a.Principals[0], a.Line, a.ValidAfter.Format(time.RFC3339))
			continue
		}
		if err := sshsig.Verify(bytes.NewReader(s.Raw), sig, a.Key, sig.HashAlgorithm, Namespace); err != nil {
			return "", fmt.Errorf("the signature does not match the receipt: %v", err)
		}
		return a.Principals[0], nil
	}
	if refused != nil {
		return "", refused
	}
	return "", fmt.Errorf("signed by %s, a key no allowed signer has", ssh.FingerprintSHA256(sig.PublicKey))
}

func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}
