package prompt

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"

	"github.com/hitl-dev/hitl/exec/permissions/rule"
	"github.com/hitl-dev/hitl/internal/suggest"
	"github.com/hitl-dev/hitl/internal/yamlsize"
	"gopkg.in/yaml.v3"
)

// AnswersFile is a list of scripted answers (--answers), consulted before
// the front end. For each question the first fitting entry in file order
// answers it: an entry with match fits a question whose message, title or
// header matches the regular expression; an entry without match fits any
// question. tool restricts an entry to questions of that tool. An entry is
// used once unless repeat is true.
type AnswersFile struct {
	path    string
	sum     string // SHA-256 of the file's bytes, hex
	mu      sync.Mutex
	entries []*answerEntry
	// workDir is the run's working directory: a consent entry for a
	// command binds it unless it says cwd (Bind).
	workDir string
	// notice says which entry was passed over and why (Bind).
	notice func(string)
	// resume: an AG-UI resume document (Resume).
	resume bool
}

// Bind gives the file what the run knows: its working directory (where a
// shell consent entry's command must run unless the entry says cwd), and
// where to say which entry fitting a question's text was passed over.
func (f *AnswersFile) Bind(workDir string, notice func(string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.workDir, f.notice = workDir, notice
}

type answerEntry struct {
	where string
	match *regexp.Regexp
	// whole is match anchored at both ends, for consent questions.
	whole  *regexp.Regexp
	tool   string
	cwd    string // a glob for the resolved directory of a command
	answer Answer
	repeat bool
	used   bool
	// passed are the prompt ids this entry was reported passed over for.
	passed map[string]bool
	// promptID binds the entry to one question by its id (an AG-UI resume
	// document's interruptId).
	promptID string
	// alternates is set when match has a | outside brackets: in a
	// command line it is more likely a pipe than an alternation.
	alternates bool
}

// hasAlternation reports whether re has an alternation (a|b) anywhere.
func hasAlternation(re *syntax.Regexp) bool {
	if re.Op == syntax.OpAlternate {
		return true
	}
	for _, sub := range re.Sub {
		if hasAlternation(sub) {
			return true
		}
	}
	return false
}

type rawEntry struct {
	Match   string          `json:"match"`
	Tool    string          `json:"tool"`
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content"`
	Text    string          `json:"text"`
	Repeat  bool            `json:"repeat"`
	Cwd     string          `json:"cwd"`
	Command string          `json:"command"`
}

// entryKeys are the keys of an answers-file entry.
var entryKeys = []string{"match", "command", "tool", "cwd", "action", "content", "text", "repeat"}

// MaxAnswersFile is the most bytes an answers file may hold. Each entry's
// content, like an answer line, is at most MaxLine (aliases included).
const MaxAnswersFile = 16 << 20

// LoadAnswers reads an answers file: JSONL when its name ends in .jsonl or
// .json (a .json file may instead hold one array of entries), YAML (a list
// of entries) otherwise. A file larger than MaxAnswersFile (or a device
// that never ends) is refused.
func LoadAnswers(path string) (*AnswersFile, error) {
	data, err := readAnswersFile(path)
	if err != nil {
		return nil, &BadAnswerError{Where: path, Reason: "cannot read the answers file: " + err.Error()}
	}
	if len(data) > MaxAnswersFile {
		return nil, &BadAnswerError{Where: path, Reason: fmt.Sprintf("the answers file is larger than %d MiB", MaxAnswersFile>>20)}
	}
	sum := sha256.Sum256(data)
	f := &AnswersFile{path: path, sum: hex.EncodeToString(sum[:])}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		if isResumeDocument(data) {
			err = f.parseResume(data)
			break
		}
		if bytes.HasPrefix(bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))), []byte("[")) {
			err = f.parseYAML(data) // one JSON array of entries (JSON is YAML)
			break
		}
		err = f.parseJSONL(data)
	case ".jsonl":
		err = f.parseJSONL(data)
	default:
		err = f.parseYAML(data)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// readAnswersFile reads at most MaxAnswersFile+1 bytes of path.
func readAnswersFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxAnswersFile+1))
}

func (f *AnswersFile) bad(line, col int, format string, args ...any) error {
	return &BadAnswerError{Where: fmt.Sprintf("%s:%d:%d", f.path, line, col), Reason: fmt.Sprintf(format, args...)}
}

func (f *AnswersFile) parseJSONL(data []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), MaxLine+2)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSuffix(bytes.TrimPrefix(sc.Bytes(), []byte("\xef\xbb\xbf")), []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if k, ok := duplicateKey(line); ok {
			// hitl would read the last; a person checking the file the first.
			return f.bad(n, 1, "the key %q appears twice in one object; give it once", k)
		}
		var raw rawEntry
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&raw); err != nil {
			hint := ""
			if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
				hint = suggest.DidYouMean(strings.Trim(name, `"`), entryKeys)
			}
			return f.bad(n, 1, "expected an entry {match?, command?, tool?, cwd?, action?, content?, text?, repeat?}: %v%s", err, hint)
		}
		if err := f.add(raw, fmt.Sprintf("%s:%d:1", f.path, n)); err != nil {
			return f.bad(n, 1, "%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		return f.bad(n+1, 1, "%v", err)
	}
	return nil
}

func (f *AnswersFile) parseYAML(data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return f.bad(1, 1, "not valid YAML: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil
	}
	list := doc.Content[0]
	if list.Kind != yaml.SequenceNode {
		return f.bad(list.Line, list.Column, "expected a list of entries (- match: ..., content: ...)")
	}
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			return f.bad(item.Line, item.Column, "expected an entry with match, tool, action, content, text or repeat")
		}
		var raw rawEntry
		seen := map[string]bool{}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], item.Content[i+1]
			if seen[k.Value] {
				// hitl would read one, a person checking the file the other.
				return f.bad(k.Line, k.Column, "the key %q is given twice in this entry; give it once", k.Value)
			}
			seen[k.Value] = true
			var err error
			switch k.Value {
			case "match":
				err = v.Decode(&raw.Match)
			case "tool":
				err = v.Decode(&raw.Tool)
			case "action":
				err = v.Decode(&raw.Action)
			case "text":
				err = v.Decode(&raw.Text)
			case "repeat":
				err = v.Decode(&raw.Repeat)
			case "cwd":
				err = v.Decode(&raw.Cwd)
			case "command":
				err = v.Decode(&raw.Command)
			case "content":
				var x any
				if err = yamlsize.Check(v, MaxLine); err != nil {
					break
				}
				if err = v.Decode(&x); err == nil {
					raw.Content, err = json.Marshal(x)
				}
			default:
				return f.bad(k.Line, k.Column, "unknown key %q%s; expected match, command, tool, cwd, action, content, text or repeat", k.Value, suggest.DidYouMean(k.Value, entryKeys))
			}
			if err != nil {
				return f.bad(v.Line, v.Column, "%s: %v", k.Value, err)
			}
		}
		if err := f.add(raw, fmt.Sprintf("%s:%d:%d", f.path, item.Line, item.Column)); err != nil {
			return f.bad(item.Line, item.Column, "%v", err)
		}
	}
	return nil
}

func (f *AnswersFile) add(raw rawEntry, where string) error {
	e := &answerEntry{where: where, tool: raw.Tool, repeat: raw.Repeat, cwd: raw.Cwd}

	if raw.Command != "" {
		// A shell command line, literally: no regular expression to
		// escape (a | or a ? is itself).
		if raw.Match != "" {
			return fmt.Errorf("give match or command, not both: command is the literal command line")
		}
		if raw.Tool != "" && raw.Tool != "shell" {
			return fmt.Errorf("command is a shell command line: it needs no tool, or tool: shell (not %q)", raw.Tool)
		}
		e.tool = "shell"
		raw.Match = regexp.QuoteMeta(raw.Command)
	}
	if raw.Match != "" {
		re, err := regexp.Compile(raw.Match)
		if err != nil {
			return fmt.Errorf("match: %v", err)
		}
		e.match = re
		// Anchored around the parsed expression, not the text: \Q
		// (quote to the end) would swallow an appended ")$".
		parsed, err := syntax.Parse(raw.Match, syntax.Perl)
		if err != nil {
			return fmt.Errorf("match: %v", err)
		}
		whole, err := regexp.Compile(`^(?:` + parsed.String() + `)$`)
		if err != nil {
			return fmt.Errorf("match: %v", err)
		}
		e.whole = whole
		e.alternates = hasAlternation(parsed)
	}
	if len(raw.Content) > 0 && string(raw.Content) == "null" {
		raw.Content = nil
	}
	action := Action(raw.Action)
	if action == "" {
		if len(raw.Content) == 0 && raw.Text == "" {
			return fmt.Errorf("the entry gives no action, content or text")
		}
		action = Accept
	}
	e.answer = Answer{Action: action, Content: raw.Content, Text: raw.Text, Source: SourceAnswers}
	f.entries = append(f.entries, e)
	return nil
}

// Answer returns the first fitting entry's answer for q. An entry whose
// match fits q's text but which cannot answer it (q asks consent and the
// entry names no tool, the command runs in another directory, the entry
// is used up) is reported as passed over.
func (f *AnswersFile) Answer(q Question) (Answer, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.entries {
		why := e.misses(q, f.workDir)
		if why == "" && e.used && !e.repeat {
			why = "-" // an entry without match answers one question in order
			if e.match != nil {
				why = "it was used already (repeat: true lets it answer again)"
			}
		}
		if why != "" {
			if why != "-" && f.notice != nil && !e.passed[q.ID] {
				if e.passed == nil {
					e.passed = map[string]bool{}
				}
				e.passed[q.ID] = true
				f.notice(fmt.Sprintf("answers file entry %s fits question %s but is passed over: %s", e.where, q.ID, why))
			}
			continue
		}
		e.used = true
		ans, err := Check(q, e.answer)
		if err != nil {
			return Answer{}, false, &BadAnswerError{Where: e.where, PromptID: q.ID, Reason: err.Error()}
		}
		ans.Source = SourceAnswers
		return ans, true, nil
	}
	return Answer{}, false, nil
}

// Path is the file as it was named; SHA256 the hex digest of its bytes
// (a receipt names what answered).
func (f *AnswersFile) Path() string   { return f.path }
func (f *AnswersFile) SHA256() string { return f.sum }

// misses says why e cannot answer q: "" when it fits, "-" when it does not
// concern q at all, else the reason a person writing it would want to know.
func (e *answerEntry) misses(q Question, workDir string) string {
	if e.promptID != "" {
		// Bound to the question by its id: it answers that one only,
		// whatever its text.
		if e.promptID != q.ID {
			return "-"
		}
		return ""
	}
	if e.tool != "" && !strings.EqualFold(e.tool, q.Tool) {
		return "-"
	}
	if q.Consent.IsConsent() {
		// Only an entry written for it: naming its tool, and matching
		// the whole text approved, so "make test" never approves
		// "make test; rm -rf x" (DESIGN §5).
		subject := q.Subject
		if subject == "" {
			subject = q.Message
		}
		if e.whole == nil || !e.whole.MatchString(subject) {
			return e.nearMiss(q, subject)
		}
		if e.tool == "" {
			return fmt.Sprintf("the question asks for consent: an entry answering it names its tool (tool: %s)", q.Tool)
		}
		if q.Dir != "" && !e.dirFits(q.Dir, workDir) {
			if e.cwd != "" {
				return fmt.Sprintf("the command runs in %s, which cwd %q does not match", q.Dir, e.cwd)
			}
			return fmt.Sprintf("the command runs in %s, not the run's working directory: an entry for it says cwd: GLOB", q.Dir)
		}
		return ""
	}
	if e.match == nil {
		return ""
	}
	if e.match.MatchString(q.Message) || (q.Title != "" && e.match.MatchString(q.Title)) || (q.Header != "" && e.match.MatchString(q.Header)) {
		return ""
	}
	return "-"
}

// nearMiss says why an entry whose match fits part of a consent
// question's text does not answer it (the match must cover the whole text):
// a person who wrote 'Push these commits\?' for a message that goes on
// with the git log would otherwise see nothing. "-" when the match fits
// no part of the text.
func (e *answerEntry) nearMiss(q Question, subject string) string {
	if e.match == nil {
		return "-"
	}
	loc := e.match.FindStringIndex(subject)
	if loc == nil {
		return "-"
	}
	what := "message"
	if q.Subject != "" {
		what = "text being approved"
		if q.Tool == "shell" {
			what = "command line"
		}
	}
	part := "a part"
	if loc[0] == 0 {
		part = "the start"
	}
	why := fmt.Sprintf("its match fits %s of %s's %s, and a question asking consent is answered only by a match of the whole %s", part, q.ID, what, what)
	switch {
	case q.Tool == "shell" && e.alternates:
		why += `: a | in match is an alternation, not a pipe; escape it (\|) or write the line as command: "..." (matched literally)`
	case q.Tool == "shell":
		why += `; write the whole line, or command: "..." (matched literally)`
	case loc[0] == 0:
		why += "; end the match with (?s).* to take any rest"
	}
	return why
}

// dirFits: the command's directory is the run's working directory, or the
// entry's cwd glob matches it (both resolved).
func (e *answerEntry) dirFits(dir, workDir string) bool {
	dir = resolved(dir)
	if e.cwd != "" {
		return rule.MatchPath(e.cwd, dir) || dir == resolved(e.cwd)
	}
	if workDir == "" {
		workDir, _ = os.Getwd()
	}
	return dir == resolved(workDir)
}

func resolved(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}
