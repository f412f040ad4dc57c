package agentrun

// The update's validator: an answer is checked against the interrupts the
// run waits on before anything is recorded, so a wrong answer is rejected
// to the caller at once. hitl resume applies its consent rules again when
// the answer reaches it: the validator can only refuse, never consent.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"gopkg.in/yaml.v3"
)

// MaxAnswer bounds an answer document, as hitl bounds an answer line.
const MaxAnswer = 1 << 20

// ValidateAnswer checks doc, an AG-UI resume document or an answers file
// (YAML, JSON or JSONL), against the pending interrupts.
func ValidateAnswer(doc []byte, pending []Interrupt) error {
	if len(doc) > MaxAnswer {
		return fmt.Errorf("the answer is %d bytes long; at most %d are taken", len(doc), MaxAnswer)
	}
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(doc)) == 0 {
		return errors.New("the answer is empty: give an AG-UI resume document or an answers file")
	}
	if isResumeDocument(doc) {
		return validateResume(doc, pending)
	}
	for _, in := range pending {
		if in.Secret {
			return fmt.Errorf("interrupt %s is a secret question: an answers file could answer it, and the value would be kept in workflow history; answer the other interrupts with an AG-UI resume document (the secret can only be cancelled here)", in.ID)
		}
	}
	return validateAnswersFile(doc, pending)
}

func isResumeDocument(doc []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(doc, &probe) != nil {
		return false
	}
	_, ok := probe["resume"]
	return ok
}

func validateResume(doc []byte, pending []Interrupt) error {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.DisallowUnknownFields()
	var rd struct {
		Resume []struct {
			InterruptID string          `json:"interruptId"`
			Status      string          `json:"status"`
			Payload     json.RawMessage `json:"payload"`
		} `json:"resume"`
	}
	if err := d.Decode(&rd); err != nil {
		return fmt.Errorf(`not an AG-UI resume document ({"resume":[{"interruptId","status","payload"}]}): %v`, err)
	}
	if len(rd.Resume) == 0 {
		return errors.New("the resume document answers nothing: resume is empty")
	}
	byID := map[string]Interrupt{}
	for _, in := range pending {
		byID[in.ID] = in
	}
	seen := map[string]bool{}
	for i, e := range rd.Resume {
		where := fmt.Sprintf("resume[%d]", i)
		in, ok := byID[e.InterruptID]
		switch {
		case e.InterruptID == "":
			return fmt.Errorf(`%s: no "interruptId": name the interrupt it answers (%s)`, where, waitingFor(pending))
		case !ok:
			return fmt.Errorf("%s: unknown interrupt id %q: the run waits for %s", where, e.InterruptID, waitingFor(pending))
		case seen[e.InterruptID]:
			return fmt.Errorf("%s: interrupt %s is answered twice", where, e.InterruptID)
		}
		seen[e.InterruptID] = true
		switch e.Status {
		case "cancelled":
			continue
		case "resolved", "":
		default:
			return fmt.Errorf("%s: status %q: expected resolved or cancelled", where, e.Status)
		}
		if in.Secret {
			return fmt.Errorf("%s: interrupt %s is a secret question: its value would be kept in workflow history, so it is never answered through Temporal (cancel it, or run the agent with hitl where a person types the secret)", where, in.ID)
		}
		if len(e.Payload) == 0 || string(e.Payload) == "null" {
			return fmt.Errorf(`%s: status resolved needs a "payload": the answer`, where)
		}
		if err := checkPayload(in, e.Payload); err != nil {
			return fmt.Errorf("%s: interrupt %s: %v", where, in.ID, err)
		}
	}
	return nil
}

// checkPayload applies the interrupt's response_schema and, for a consent
// question, hitl's rule that consent names its option: never true, an
// index or a yes-word outside the options.
func checkPayload(in Interrupt, payload json.RawMessage) error {
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		return fmt.Errorf("the payload is not JSON: %v", err)
	}
	if in.Reason == "confirmation" {
		if _, ok := v.(string); !ok {
			return fmt.Errorf("a confirmation is answered by naming its option (%s), not with %s", options(in.ResponseSchema), shorten(string(payload)))
		}
	}
	if len(in.ResponseSchema) == 0 {
		return nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(in.ResponseSchema, &s); err != nil {
		return fmt.Errorf("its response_schema cannot be read: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("its response_schema cannot be used: %v", err)
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Errorf("the payload %s does not fit its response_schema: %v", shorten(string(payload)), err)
	}
	return nil
}

// answersEntry is an entry of an answers file (DESIGN §5).
type answersEntry struct {
	Match   *string `json:"match" yaml:"match"`
	Tool    string  `json:"tool" yaml:"tool"`
	Action  string  `json:"action" yaml:"action"`
	Content any     `json:"content" yaml:"content"`
	Text    *string `json:"text" yaml:"text"`
	Repeat  bool    `json:"repeat" yaml:"repeat"`
	Cwd     string  `json:"cwd" yaml:"cwd"`
}

// validateAnswersFile reads an answers file's entries and refuses one that
// answers none of the pending interrupts; which entry answers which
// question, and the consent rules on tool, match and directory, hitl
// resume applies (it knows the exact command line each approval shows).
func validateAnswersFile(doc []byte, pending []Interrupt) error {
	entries, err := parseAnswersFile(doc)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return errors.New("the answers file has no entries")
	}
	fits := false
	for i, e := range entries {
		switch e.Action {
		case "", "accept", "decline", "cancel":
		default:
			return fmt.Errorf("entry %d: action %q: expected accept, decline or cancel", i+1, e.Action)
		}
		var re *regexp.Regexp
		if e.Match != nil {
			if re, err = regexp.Compile(*e.Match); err != nil {
				return fmt.Errorf("entry %d: match: %v", i+1, err)
			}
		}
		for _, in := range pending {
			switch {
			case in.Reason == "confirmation" && (re == nil || e.Tool == ""):
				// Consent is answered only by an entry naming its tool
				// and the whole text approved.
			case re != nil && in.Reason != "confirmation" && !re.MatchString(in.Message):
			default:
				fits = true
			}
		}
	}
	if !fits {
		return fmt.Errorf("no entry of the answers file answers what the run waits for (%s); a confirmation is answered only by an entry with tool and match", waitingFor(pending))
	}
	return nil
}

func parseAnswersFile(doc []byte) ([]answersEntry, error) {
	trimmed := bytes.TrimSpace(doc)
	var entries []answersEntry
	switch {
	case bytes.HasPrefix(trimmed, []byte("[")):
		d := json.NewDecoder(bytes.NewReader(trimmed))
		d.DisallowUnknownFields()
		if err := d.Decode(&entries); err != nil {
			return nil, fmt.Errorf("the answers file (a JSON array) cannot be read: %v", err)
		}
	case bytes.HasPrefix(trimmed, []byte("{")):
		sc := bufio.NewScanner(bytes.NewReader(trimmed))
		sc.Buffer(nil, MaxAnswer+1)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var e answersEntry
			d := json.NewDecoder(bytes.NewReader(line))
			d.DisallowUnknownFields()
			if err := d.Decode(&e); err != nil {
				return nil, fmt.Errorf("not an AG-UI resume document nor an answers file: answers line %d: %v", n, err)
			}
			entries = append(entries, e)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	default:
		d := yaml.NewDecoder(bytes.NewReader(trimmed))
		d.KnownFields(true)
		if err := d.Decode(&entries); err != nil {
			return nil, fmt.Errorf("not an AG-UI resume document nor an answers file (a YAML, JSON or JSONL list of entries): %v", err)
		}
	}
	return entries, nil
}

func waitingFor(pending []Interrupt) string {
	if len(pending) == 0 {
		return "nothing"
	}
	parts := make([]string, 0, len(pending))
	for _, in := range pending {
		parts = append(parts, fmt.Sprintf("%s (%s)", in.ID, in.Reason))
	}
	return strings.Join(parts, ", ")
}

func options(schema json.RawMessage) string {
	var s struct {
		Enum []any `json:"enum"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Enum) == 0 {
		return "one of its options"
	}
	names := make([]string, 0, len(s.Enum))
	for _, e := range s.Enum {
		b, _ := json.Marshal(e)
		names = append(names, string(b))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func shorten(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
