package run

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec"
)

var commandRef = regexp.MustCompile(`^/([A-Za-z0-9_.-]+)(?:\s+(.*))?$`)

// FirstMessage is the first user turn of a run of a given msg (the
// command line's words, or a --message-file's text): /NAME runs the
// agent's command NAME (DESIGN §2), and an empty message is
// exec.DefaultMessage.
func FirstMessage(a *config.Agent, msg string) (string, error) {
	if m := commandRef.FindStringSubmatch(strings.TrimSpace(msg)); m != nil && len(a.Commands) > 0 {
		text, ok := a.Commands[m[1]]
		if !ok {
			names := make([]string, 0, len(a.Commands))
			for n := range a.Commands {
				names = append(names, "/"+n)
			}
			sort.Strings(names)
			return "", usagef("agent %s has no command /%s; its commands: %s", a.Name, m[1], strings.Join(names, ", "))
		}
		if m[2] != "" {
			text += "\n\n" + m[2]
		}
		return text, nil
	}
	if strings.TrimSpace(msg) == "" {
		return exec.DefaultMessage, nil
	}
	return msg, nil
}

// SystemPrompt is the agent's instruction plus the date and environment
// facts it asked for.
func SystemPrompt(a *config.Agent, now time.Time, workingDir string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(a.Instruction))
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
	return strings.TrimSpace(b.String())
}
