package ext_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-dev/hitl/exec/ext"
	"github.com/hitl-dev/hitl/exec/ext/exttest"
	"github.com/hitl-dev/hitl/exec/sandbox"
)

var (
	frame = exttest.Frame
	fake  = func(t *testing.T, out []byte, rest string) string { return exttest.Fake(t, out, rest) }
	hello = string(exttest.Hello)
)

func offSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(sandbox.Off, "")
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// A companion that is not hitl's, or not this hitl's, or not well, is
// refused at its start with what it said: never a hang, never a panic.
func TestStartRefusesWhatIsNotHitlExt(t *testing.T) {
	ext.HelloTimeout = 500 * time.Millisecond
	for _, tc := range []struct {
		name      string
		out, rest string
		want      []string
	}{
		{"exits at once", "", "echo 'it broke' >&2; exit 3", []string{"ended before its hello", "exit status 3", "it broke"}},
		{"closes its stdout and stays", "", "exec >&-; exec sleep 30", nil},
		{"prints text", "hello world\n", "sleep 5", []string{"malformed frame", "length 1751477356"}},
		{"another first message", string(frame(ext.TDelta, 0, "")), "sleep 5", []string{"not hitl's companion program"}},
		{"hello that is not JSON", string(frame(ext.THello, 0, "{")), "sleep 5", []string{"not hitl's companion program"}},
		{"another protocol", string(frame(ext.THello, 0, `{"proto":99}`)), "sleep 5", []string{"speaks protocol 99, this hitl 1", "go install github.com/hitl-dev/hitl/cmd/hitl-ext@"}},
		{"silent", "", "exec sleep 30", []string{"did not say hello within 500ms"}},
		{"a frame cut short", string(frame(ext.THello, 0, `{"proto":1}`)[:7]), "exit 0", []string{"unexpected EOF"}},
		{"a length past the bound", "\x7f\xff\xff\xff", "sleep 5", []string{"malformed frame", "length 2147483647"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := fake(t, []byte(tc.out), tc.rest)
			start := time.Now()
			c, err := ext.Start(offSandbox(t), path, func(ext.Frame) {})
			if err == nil {
				c.Close()
				t.Fatal("started")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want %q in it", err, w)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("refused after %s", d)
			}
		})
	}
}

// A companion that ends while a call waits fails that call, saying how it
// ended; a cancelled call returns the context's error and tells it.
func TestCallEndsWithTheCompanion(t *testing.T) {
	t.Run("dies", func(t *testing.T) {
		path := fake(t, []byte(hello), "head -c 1 >/dev/null; echo 'out of memory' >&2; kill -9 $$")
		c, err := ext.Start(offSandbox(t), path, func(ext.Frame) {})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.Call(context.Background(), ext.TTurn, map[string]string{"x": "y\n"})
		if err == nil || !strings.Contains(err.Error(), "hitl-ext ended") || !strings.Contains(err.Error(), "out of memory") || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("err = %v", err)
		}
		if !c.Dead() {
			t.Error("not dead")
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		dir := t.TempDir()
		got := filepath.Join(dir, "got")
		path := fake(t, []byte(hello), "cat > "+got)
		c, err := ext.Start(offSandbox(t), path, func(ext.Frame) {})
		if err != nil {
			t.Fatal(err)
		}
		ext.CancelGrace = 100 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := c.Call(ctx, ext.TTurn, "x"); err != context.DeadlineExceeded {
			t.Fatalf("err = %v", err)
		}
		c.Close()
		b, _ := os.ReadFile(got)
		if !bytes.Contains(b, frame(ext.TCancel, 1, "")) {
			t.Errorf("no cancel frame in %q", b)
		}
	})
}

// Frames round-trip, and a payload is read as it comes: a peer that
// claims a large frame and ends costs what it sent.
func TestFrames(t *testing.T) {
	var buf bytes.Buffer
	w := ext.NewConn(nil, &buf)
	if err := w.SendJSON(ext.TTurn, 7, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Send(ext.TBody, 8, []byte{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	r := ext.NewConn(&buf, nil)
	f, err := r.Read()
	if err != nil || f.Type != ext.TTurn || f.ID != 7 || string(f.Data) != `{"a":1}` {
		t.Fatalf("%+v %v", f, err)
	}
	f, err = r.Read()
	if err != nil || f.Type != ext.TBody || f.ID != 8 || !bytes.Equal(f.Data, []byte{0, 1, 2}) {
		t.Fatalf("%+v %v", f, err)
	}
	big := frame(ext.TBody, 1, "")
	binary.BigEndian.PutUint32(big[:4], 200<<20)
	r = ext.NewConn(bytes.NewReader(append(big, "short"...)), nil)
	if _, err := r.Read(); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("err = %v", err)
	}
	if err := w.Send(ext.TBody, 1, make([]byte, ext.MaxFrame)); err == nil {
		t.Error("a frame past MaxFrame was sent")
	}
}

// hitl itself links neither the Gemini SDK nor the OpenAPI parser (nor
// what they pull in): they are hitl-ext's, so hitl's start-up does not
// initialize them.
func TestHitlLinksNoPackageOfHitlExt(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/hitl-dev/hitl").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, heavy := range []string{"google.golang.org/genai", "github.com/getkin/kin-openapi", "google.golang.org/grpc", "cloud.google.com/go/auth", "github.com/google/go-cmp"} {
			if pkg == heavy || strings.HasPrefix(pkg, heavy+"/") {
				t.Errorf("hitl links %s", pkg)
			}
		}
	}
	out, err = exec.Command("go", "list", "-deps", ext.Package).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, need := range []string{"google.golang.org/genai", "github.com/getkin/kin-openapi/openapi3"} {
		if !strings.Contains("\n"+string(out), "\n"+need+"\n") {
			t.Errorf("hitl-ext does not link %s", need)
		}
	}
}

// A companion that never answers does not hold the run: reading a
// document is bounded.
func TestReadOpenAPIIsBounded(t *testing.T) {
	ext.OneShotTimeout, ext.CancelGrace = 300*time.Millisecond, 100*time.Millisecond
	path := fake(t, []byte(hello), "exec sleep 30")
	getenv := func(k string) string {
		if k == ext.EnvVar {
			return path
		}
		return ""
	}
	start := time.Now()
	_, err := ext.ReadOpenAPI(context.Background(), offSandbox(t), getenv, "spec.json", []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "hitl-ext did not read the OpenAPI document spec.json within 300ms") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
}

// A call's silence is counted from the call: a hitl-ext idle longer than
// the bound between calls (a person deciding) is not killed at the next.
func TestSilenceCountsFromTheCall(t *testing.T) {
	replyFile := filepath.Join(t.TempDir(), "reply.bin")
	if err := os.WriteFile(replyFile, frame(ext.TTurnDone, 1, `{"turn":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// It answers the first call 4.5 s after its hello; the call comes
	// after 3 s of idleness (past the 2 s bound), and waits 1.5 s.
	path := fake(t, []byte(hello), "sleep 4.5; cat "+replyFile+"; exec sleep 30")
	c, err := ext.Start(offSandbox(t), path, func(ext.Frame) {})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetSilence(2 * time.Second)
	time.Sleep(3 * time.Second)
	if _, err := c.Call(context.Background(), ext.TTurn, "x"); err != nil {
		t.Fatalf("a call after an idle gap: %v", err)
	}
}
