package agentrun

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// InlineLimit is the largest journal carried in workflow history; a larger
// one goes to the worker's store (Temporal refuses payloads past 2 MiB and
// warns from 512 KiB).
const InlineLimit = 256 << 10

// Activities run hitl on a worker.
type Activities struct {
	// Hitl is the hitl binary.
	Hitl string
	// Store is the directory of the runs' journals, shared by the workers
	// (a network file system or a mounted bucket): hitl writes each
	// journal through to it, so an activity retried on another worker
	// resumes from every answer and command the killed one recorded.
	Store string
	// Env is the environment of hitl (the worker's, holding
	// HITL_SESSION_KEY).
	Env []string
	// InlineLimit overrides InlineLimit (tests).
	InlineLimit int
	// HeartbeatEvery is how often a running hitl is reported alive.
	HeartbeatEvery time.Duration
}

// Heartbeat is what the activity reports while hitl runs: how much of the
// journal is written (for people watching; a retry reads the journal from
// the store, never from these details, which the SDK may send late).
type Heartbeat struct {
	JournalSize int64 `json:"journal_size"`
}

var safeID = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// journalPath is where the run of workflowID keeps its journal in the
// store.
func (a *Activities) journalPath(workflowID string) string {
	sum := sha256.Sum256([]byte(workflowID))
	name := safeID.ReplaceAllString(workflowID, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	return filepath.Join(a.Store, "runs", name+"-"+hex.EncodeToString(sum[:6])+".jsonl")
}

// RunHitl runs hitl exec (the first step) or hitl resume in the run's
// working directory, and returns how it ended with its journal.
func (a *Activities) RunHitl(ctx context.Context, step Step) (StepResult, error) {
	path := a.journalPath(step.WorkflowID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return StepResult{}, fmt.Errorf("journal store: %w", err)
	}
	have, err := a.bring(path, step.Journal)
	if err != nil {
		return StepResult{}, err
	}
	args := []string{"exec", "--json", "--prompt", "none", "--session", path, step.Input.AgentFile}
	if step.Input.Message != "" {
		args = append(args, step.Input.Message)
	}
	if have || step.Resume {
		// A retried first step resumes what the killed one wrote.
		args = []string{"resume", "--json", "--prompt", "none"}
		if step.Unanswered != "" {
			args = append(args, "--unanswered", step.Unanswered)
		}
		if len(step.Answers) > 0 {
			doc, err := os.CreateTemp("", "hitl-temporal-answer-"+safeID.ReplaceAllString(step.WorkflowID, "_")+"-*.json")
			if err != nil {
				return StepResult{}, err
			}
			defer os.Remove(doc.Name())
			_, err = doc.Write(step.Answers)
			if cerr := doc.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return StepResult{}, err
			}
			args = append(args, "--answers", doc.Name())
		}
		args = append(args, path)
	}
	res, err := a.run(ctx, step.Input.WorkingDir, args, path)
	if err != nil {
		return StepResult{}, err
	}
	res.Journal, err = a.keep(path)
	return res, err
}

// bring makes the store's journal the run's latest: the one in history,
// unless the store holds it with more records written after (a killed
// attempt's). have is false when there is no journal yet.
func (a *Activities) bring(path string, j Journal) (have bool, err error) {
	local, lerr := os.ReadFile(path)
	if lerr != nil && !errors.Is(lerr, os.ErrNotExist) {
		return false, fmt.Errorf("journal store: %w", lerr)
	}
	data := j.Data
	if j.Ref != "" {
		if data, err = os.ReadFile(filepath.Join(a.Store, "blobs", filepath.Base(j.Ref))); err != nil {
			return false, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the run's journal %s is not in this worker's store %s: workers share their --store", j.Ref, a.Store), "JournalMissing", err)
		}
	}
	if j.SHA256 != "" && sha(data) != j.SHA256 {
		return false, temporal.NewNonRetryableApplicationError("the run's journal does not match its SHA-256 in history", "JournalDamaged", nil)
	}
	switch {
	case len(data) == 0:
		return lerr == nil, nil
	case lerr == nil && bytes.HasPrefix(local, data):
		return true, nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return false, fmt.Errorf("journal store: %w", err)
	}
	return true, os.Rename(tmp, path)
}

// keep returns the journal for history: inline when small, else written
// to the store's blobs by its SHA-256.
func (a *Activities) keep(path string) (Journal, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Journal{}, fmt.Errorf("journal: %w", err)
	}
	j := Journal{SHA256: sha(data), Size: int64(len(data))}
	limit := a.InlineLimit
	if limit <= 0 {
		limit = InlineLimit
	}
	if len(data) <= limit {
		j.Data = data
		return j, nil
	}
	j.Ref = j.SHA256 + ".jsonl"
	blob := filepath.Join(a.Store, "blobs", j.Ref)
	if err := os.MkdirAll(filepath.Dir(blob), 0o700); err != nil {
		return Journal{}, fmt.Errorf("journal store: %w", err)
	}
	tmp := blob + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return Journal{}, fmt.Errorf("journal store: %w", err)
	}
	return j, os.Rename(tmp, blob)
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// finished is the run.finished event hitl writes last with --json.
type finished struct {
	Type       string      `json:"type"`
	Status     string      `json:"status"`
	ExitCode   int         `json:"exit_code"`
	Text       string      `json:"text"`
	Error      string      `json:"error"`
	Interrupts []Interrupt `json:"interrupts"`
}

// run runs hitl with args in dir, heartbeating while it runs, and reads
// its run.finished. hitl killed, or ending without run.finished, is an
// error: Temporal retries the activity, which resumes the journal.
func (a *Activities) run(ctx context.Context, dir string, args []string, journal string) (StepResult, error) {
	cmd := osexec.CommandContext(ctx, a.Hitl, args...)
	cmd.Dir, cmd.Env = dir, a.Env
	cmd.Stdin = nil // /dev/null: nobody answers on stdin
	var stderr bounded
	cmd.Stderr = &stderr
	stdout, w, err := os.Pipe()
	if err != nil {
		return StepResult{}, err
	}
	defer stdout.Close()
	cmd.Stdout = w
	prepare(cmd)
	waited, err := start(cmd)
	w.Close()
	if err != nil {
		return StepResult{}, fmt.Errorf("cannot start %s: %w", a.Hitl, err)
	}
	done := make(chan struct{})
	defer close(done)
	go a.heartbeat(ctx, journal, done)

	var fin *finished
	secret := map[string]bool{} // the secret questions asked, by prompt id
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.Contains(line, []byte(`"prompt.request"`)):
			var q struct {
				Type     string `json:"type"`
				PromptID string `json:"prompt_id"`
				Secret   bool   `json:"secret"`
			}
			if json.Unmarshal(line, &q) == nil && q.Type == "prompt.request" && q.Secret {
				secret[q.PromptID] = true
			}
		case bytes.Contains(line, []byte(`"run.finished"`)):
			var f finished
			if json.Unmarshal(line, &f) == nil && f.Type == "run.finished" {
				fin = &f
			}
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := <-waited
	code := cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		return StepResult{}, ctx.Err()
	}
	if fin == nil || code < 0 {
		return StepResult{}, fmt.Errorf("hitl %s ended without finishing its run (%v): %s", args[0], waitErr, stderr.String())
	}
	if code == 2 && strings.Contains(stderr.String(), "in use by another hitl process") {
		// An earlier attempt's hitl still holds the journal (its worker
		// was cut off, not dead): retried until it lets go.
		return StepResult{}, fmt.Errorf("the run's journal is still held by an earlier attempt: %s", stderr.String())
	}
	for i := range fin.Interrupts {
		fin.Interrupts[i].Secret = secret[fin.Interrupts[i].ID]
	}
	return StepResult{ExitCode: code, Status: fin.Status, Text: fin.Text, Error: fin.Error, Interrupts: fin.Interrupts}, nil
}

func (a *Activities) heartbeat(ctx context.Context, journal string, done <-chan struct{}) {
	every := a.HeartbeatEvery
	if every <= 0 {
		every = HeartbeatTimeout / 4
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		var hb Heartbeat
		if fi, err := os.Stat(journal); err == nil {
			hb.JournalSize = fi.Size()
		}
		activity.RecordHeartbeat(ctx, hb)
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// bounded keeps the last 16 KiB written (hitl's stderr, for errors).
type bounded struct{ b []byte }

func (w *bounded) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if n := len(w.b) - 16<<10; n > 0 {
		w.b = append(w.b[:0], w.b[n:]...)
	}
	return len(p), nil
}

func (w *bounded) String() string { return string(bytes.TrimSpace(w.b)) }
