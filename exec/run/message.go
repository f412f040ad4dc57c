package run

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

var commandRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^/([A-Za-z0-9_.-]+)(?:\s+(.*))?$`) })

// FirstMessage is the first user turn of a run of a given msg (the
// command line's words, or a --message-file's text): /NAME runs the
// agent's command NAME (DESIGN §2) with the rest of the message as its
// arguments (config.RenderCommand: $1, ${args[0]}, ${args}), and an empty message is
// exec.DefaultMessage.
func FirstMessage(a *config.Agent, msg string) (string, error) {
	if m := commandRef().FindStringSubmatch(strings.TrimSpace(msg)); m != nil && len(a.Commands) > 0 {
		text, ok := a.Commands[m[1]]
		if !ok {
			names := make([]string, 0, len(a.Commands))
			for n := range a.Commands {
				names = append(names, "/"+n)
			}
			sort.Strings(names)
			return "", usagef("agent %s has no command /%s; its commands: %s", a.Name, m[1], strings.Join(names, ", "))
		}
		if segs := a.CommandSegments[m[1]]; len(segs) > 0 {
			return joinSegments(config.RenderSegments(segs, m[2])), nil
		}
		return config.RenderCommand(text, m[2]), nil
	}
	if strings.TrimSpace(msg) == "" {
		return exec.DefaultMessage, nil
	}
	return msg, nil
}

// CommandCalls is the command msg runs, cut at its tool calls
// (config.RenderSegments), or nil when it runs none.
func CommandCalls(a *config.Agent, msg string) []config.Segment {
	m := commandRef().FindStringSubmatch(strings.TrimSpace(msg))
	if m == nil || len(a.CommandSegments[m[1]]) == 0 {
		return nil
	}
	return config.RenderSegments(a.CommandSegments[m[1]], m[2])
}

// joinSegments is a command's text with its tool calls as written.
func joinSegments(segs []config.Segment) string {
	var b strings.Builder
	for _, s := range segs {
		if s.Call != nil {
			b.WriteString(s.Call.Text)
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

// MaxPromptFile is the most bytes an add_prompt_files file may hold: a
// larger one is refused rather than cut (a cut prompt would mislead).
const MaxPromptFile = 256 << 10

// SystemPrompt is the agent's instruction, then the instructions of its
// toolsets (as cagent adds them), the date and environment facts it asked
// for, and the contents of its add_prompt_files in order. A prompt file
// that cannot be read now, or is larger than MaxPromptFile, is a
// *UsageError naming it (exit 2).
func SystemPrompt(a *config.Agent, now time.Time, workingDir string, toolsets []string) (string, error) {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(a.Instruction))
	for _, t := range toolsets {
		b.WriteString("\n\n" + strings.TrimSpace(t))
	}
	if a.AddDate {
		fmt.Fprintf(&b, "\n\nToday's date is %s.", now.Format("2006-01-02"))
	}
	if a.AddEnvironmentInfo {
		dir := workingDir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		dir, _ = filepath.Abs(dir)
		_, gitErr := os.Stat(filepath.Join(dir, ".git"))
		fmt.Fprintf(&b, "\n\nEnvironment:\n- working directory: %s\n- operating system: %s\n- git repository: %v", dir, runtime.GOOS, gitErr == nil)
	}
	for _, p := range a.PromptFiles {
		text, err := readPromptFile(p)
		if err != nil {
			return "", &UsageError{fmt.Errorf("agent %s: add_prompt_files: %w", a.Name, err)}
		}
		if t := strings.TrimSpace(text); t != "" {
			b.WriteString("\n\n" + t)
		}
	}
	return strings.TrimSpace(b.String()), nil
}

// readPromptFile reads one prompt file, bounded by MaxPromptFile.
func readPromptFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the prompt file %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return "", fmt.Errorf("the prompt file %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxPromptFile+1))
	if err != nil {
		return "", fmt.Errorf("cannot read the prompt file %s: %w", path, err)
	}
	if len(data) > MaxPromptFile {
		return "", fmt.Errorf("the prompt file %s is larger than %d KiB; shorten it", path, MaxPromptFile>>10)
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("the prompt file %s is not UTF-8 text", path)
	}
	return string(data), nil
}
