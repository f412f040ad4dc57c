package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// key is the workers' HITL_SESSION_KEY in these tests.
const key = "e2e-test-session-key-0123456789"

var (
	bin      string // the directory holding hitl and hitl-temporal
	temporal string // the Temporal CLI; "" skips
	skipWhy  string
)

func TestMain(m *testing.M) {
	temporal, skipWhy = findTemporal()
	code := 0
	if temporal != "" {
		dir, err := os.MkdirTemp("", "hitl-temporal-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		bin = dir
		if err := build(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
		code = m.Run()
		os.RemoveAll(dir)
	} else {
		code = m.Run()
	}
	os.Exit(code)
}

func findTemporal() (string, string) {
	if p := os.Getenv("HITL_TEMPORAL_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("HITL_TEMPORAL_BIN=%s: %v", p, err)
		}
		return p, ""
	}
	if p, err := osexec.LookPath("temporal"); err == nil {
		return p, ""
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "hitl-temporal", "bin", "temporal")
		if _, err := os.Stat(p); err == nil {
			return p, ""
		}
	}
	return "", "no Temporal CLI: set HITL_TEMPORAL_BIN, put temporal on PATH, or build it with GOBIN=$HOME/.cache/hitl-temporal/bin go install github.com/temporalio/cli/cmd/temporal@v1.5.1 (.ci/run does)"
}

// build builds hitl from the main module and hitl-temporal from this one.
func build(dir string) error {
	for _, b := range []struct{ dir, pkg, out string }{
		{"../../..", ".", "hitl"},
		{"..", "./cmd/hitl-temporal", "hitl-temporal"},
	} {
		cmd := osexec.Command("go", "build", "-o", filepath.Join(dir, b.out), b.pkg)
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b.out, err, out)
		}
	}
	return nil
}

func needTemporal(t testing.TB) {
	t.Helper()
	if temporal == "" {
		t.Skip("SKIP: " + skipWhy)
	}
}

// freePorts returns n distinct loopback ports that were free a moment ago:
// all are held open together while chosen, so two never coincide (ports
// chosen one after another can: the kernel may hand out the one just let go).
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// server is a Temporal dev server on loopback with a SQLite file.
type server struct {
	t        testing.TB
	db       string
	port     int
	httpPort int
	cmd      *osexec.Cmd
	exited   chan struct{} // closed when cmd has been waited for
	log      *os.File
}

func startServer(t testing.TB) *server {
	t.Helper()
	needTemporal(t)
	dir := t.TempDir()
	s := &server{t: t, db: filepath.Join(dir, "temporal.db")}
	var err error
	if s.log, err = os.Create(filepath.Join(dir, "server.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(); s.log.Close() })
	// A port found free can be taken before the server binds it (another
	// test, another package): a server that exits at once is started again
	// on other ports, up to three times.
	for attempt := 1; ; attempt++ {
		p := freePorts(t, 2)
		s.port, s.httpPort = p[0], p[1]
		err := s.launch()
		if err == nil {
			return s
		}
		if !errors.Is(err, errExited) || attempt == 3 {
			t.Fatalf("the dev server did not come up on %s: %v\n%s", s.addr(), err, s.logTail())
		}
		t.Logf("the dev server exited at start (attempt %d), trying other ports:\n%s", attempt, s.logTail())
	}
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// start starts the server again on its ports, with its database.
func (s *server) start() {
	s.t.Helper()
	if err := s.launch(); err != nil {
		s.t.Fatalf("the dev server did not come up again on %s: %v\n%s", s.addr(), err, s.logTail())
	}
}

var errExited = errors.New("the dev server exited")

// launch starts the server and waits until it answers a health check, it
// exits (errExited), or two minutes pass.
func (s *server) launch() error {
	fmt.Fprintf(s.log, "--- start-dev on %s (http %d)\n", s.addr(), s.httpPort)
	s.cmd = osexec.Command(temporal, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", strconv.Itoa(s.port), "--http-port", strconv.Itoa(s.httpPort),
		"--db-filename", s.db, "--log-level", "error")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return err
	}
	cmd, exited := s.cmd, make(chan struct{})
	s.exited = exited
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := client.Dial(client.Options{HostPort: s.addr(), Logger: nopLogger{}})
		if err == nil {
			_, err = c.CheckHealth(context.Background(), &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-exited:
			s.cmd = nil
			return fmt.Errorf("%w (%v)", errExited, waitErr)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return err
		}
	}
}

// logTail is the end of the server's log, for a failure's message.
func (s *server) logTail() string {
	b, err := os.ReadFile(s.log.Name())
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return "server log (" + s.log.Name() + "):\n" + string(b)
}

func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	s.cmd = nil
}

// site is one test's world: a server, a working directory with the
// agent, a store and a state directory the workers share, a task queue.
type site struct {
	t     testing.TB
	srv   *server
	dir   string
	store string
	state string
	queue string
}

func newSite(t testing.TB, srv *server, agent string) *site {
	t.Helper()
	// The runs' working directory holds neither the workers' store nor
	// hitl's state directory (hitl's sandbox keeps a command out of both).
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	return &site{t: t, srv: srv, dir: dir, store: filepath.Join(root, "store"), state: filepath.Join(root, "state"), queue: "q-" + strings.ReplaceAll(t.Name(), "/", "-")}
}

func (s *site) env() []string {
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"TEMPORAL_ADDRESS=" + s.srv.addr(),
		"XDG_STATE_HOME=" + s.state,
	}
	return env
}

// worker is a hitl-temporal worker process.
type worker struct {
	cmd *osexec.Cmd
	out bytes.Buffer
}

func (s *site) worker() *worker {
	s.t.Helper()
	w := &worker{}
	w.cmd = osexec.Command(filepath.Join(bin, "hitl-temporal"), "worker", "--task-queue", s.queue, "--store", s.store)
	w.cmd.Env = append(s.env(), "HITL_SESSION_KEY="+key)
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.out
	if err := w.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { w.kill() })
	return w
}

// kill ends the worker with SIGKILL: no clean-up of its own.
func (w *worker) kill() {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
}

// run runs hitl-temporal (or hitl) in the site's directory, without the
// session key (start, list, answer and result never need it).
func (s *site) run(name string, args ...string) (stdout, stderr string, code int) {
	s.t.Helper()
	cmd := osexec.Command(filepath.Join(bin, name), args...)
	cmd.Dir, cmd.Env = s.dir, s.env()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *osexec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		s.t.Fatalf("%s %v: %v", name, args, err)
	}
	return o.String(), e.String(), code
}

func (s *site) mustRun(name string, args ...string) string {
	s.t.Helper()
	out, errOut, code := s.run(name, args...)
	if code != 0 {
		s.t.Fatalf("%s %s: exit %d\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// waiting is list --json's line for id, once the run waits.
type waiting struct {
	ID         string `json:"id"`
	Interrupts []struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	} `json:"interrupts"`
}

func (s *site) waitFor(id string) waiting {
	s.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		out, _, code := s.run("hitl-temporal", "list", "--json")
		if code == 0 {
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var w waiting
				if json.Unmarshal([]byte(line), &w) == nil && w.ID == id {
					return w
				}
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	s.t.Fatalf("run %s never showed in list as waiting", id)
	return waiting{}
}

func (s *site) waitFile(name string) {
	s.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(filepath.Join(s.dir, name)); err == nil && fi.Size() > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("%s never appeared", name)
}

func (s *site) write(name, text string) {
	s.t.Helper()
	if err := os.WriteFile(filepath.Join(s.dir, name), []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *site) read(name string) string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

type nopLogger struct{}

func (nopLogger) Debug(string, ...any) {}
func (nopLogger) Info(string, ...any)  {}
func (nopLogger) Warn(string, ...any)  {}
func (nopLogger) Error(string, ...any) {}

func runEnv(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := osexec.Command(filepath.Join(bin, name), args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}
