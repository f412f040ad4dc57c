package shell

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	hitlexec "github.com/hitl-dev/hitl/exec"
)

func TestCapture(t *testing.T) {
	mask := func(s string) string { return strings.ReplaceAll(s, "SECRET", "***") }
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{"empty", 10, nil, ""},
		{"fits", 10, []string{"abc", "def"}, "abcdef"},
		{"exactly the limit", 10, []string{"0123456789"}, "0123456789"},
		{"multi-byte fits", 4, []string{"héé", "é"}, "hééé"},
		{"character split across writes", 4, []string{"ab\xc3", "\xa9d"}, "abéd"},
		{"cut", 10, []string{"0123456789", "abcdefghij"}, "01234\n[... 10 characters cut: the output had 20 characters (20 bytes); the first and last 5 are shown ...]\nfghij"},
		{"cut multi-byte", 4, []string{"ééééé"}, "éé\n[... 1 characters cut: the output had 5 characters (10 bytes); the first and last 2 are shown ...]\néé"},
		{"masked", 100, []string{"a SECRET b"}, "a *** b"},
		{"masked across writes", 100, []string{"a SEC", "RET b"}, "a *** b"},
		{"masked across the head cut", 10, []string{"abSECRETcd", strings.Repeat("x", 20)}, "ab***\n[... 20 characters cut: the output had 30 characters (30 bytes); the first and last 5 are shown ...]\nxxxxx"},
		{"masked across the tail cut", 10, []string{strings.Repeat("x", 20), "abSECRET"}, "xxxxx\n[... 18 characters cut: the output had 28 characters (28 bytes); the first and last 5 are shown ...]\nab***"},
		{"invalid bytes", 10, []string{"a\xffb"}, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(tt.limit)
			for _, w := range tt.writes {
				c.Write([]byte(w))
			}
			if got := c.Text(mask); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestCaptureContinuationFlood(t *testing.T) {
	c := newCapture(10)
	c.Write([]byte("abc"))
	c.Write([]byte(strings.Repeat("\x80", 1<<20)))
	if len(c.head) > 4*10+4 {
		t.Errorf("head grew to %d bytes", len(c.head))
	}
	if got := c.Text(nil); !strings.Contains(got, "characters cut") {
		t.Errorf("no marker: %q", got[:50])
	}
}

// vmHWM is the peak resident set size of this process, in bytes (Linux).
func vmHWM(t testing.TB) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("needs /proc/self/status")
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmHWM")
	return 0
}

// TestStreamOneGigabyte streams 1 GiB of output through the tool: the peak
// RSS of the whole test process must stay under 64 MiB.
func TestStreamOneGigabyte(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 1 GiB")
	}
	if _, err := exec.LookPath("head"); err != nil {
		t.Skip("needs head")
	}
	runtime.GC()
	before := vmHWM(t)
	start := time.Now()
	res, err := call(t, yolo(t, Options{Timeout: 5 * time.Minute}), map[string]any{"cmd": "head -c 1073741824 /dev/zero"})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	peak := vmHWM(t)
	if !strings.Contains(res.Text, "(1073741824 bytes)") {
		t.Fatalf("result does not account for 1 GiB: %q", res.Text[15000:15200])
	}
	t.Logf("1 GiB in %s: %.0f MiB/s; peak RSS (VmHWM) %.1f MiB (%.1f MiB before)",
		elapsed.Round(time.Millisecond), 1024/elapsed.Seconds(), float64(peak)/(1<<20), float64(before)/(1<<20))
	if peak > 64<<20 {
		t.Errorf("peak RSS %d MiB, want under 64 MiB", peak>>20)
	}
}

func BenchmarkCapture(b *testing.B) {
	chunk := []byte(strings.Repeat("x", 64<<10))
	c := newCapture(MaxOutput)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		c.Write(chunk)
	}
}

// BenchmarkStream runs a command printing 1 GiB per iteration.
func BenchmarkStream(b *testing.B) {
	tool := New(Options{Sandbox: testSandbox(b), Yolo: true, Timeout: 5 * time.Minute, BaseDir: b.TempDir()})
	b.SetBytes(1 << 30)
	for b.Loop() {
		res, err := tool.Call(b.Context(), toolCall(`head -c 1073741824 /dev/zero`))
		if err != nil || res.IsError {
			b.Fatal(err, res.Text)
		}
	}
	b.ReportMetric(float64(vmHWM(b))/(1<<20), "peakRSS-MiB")
}

func toolCall(cmd string) (c hitlexec.ToolCall) {
	c.ID, c.Name = "bench", Name
	c.Arguments = []byte(fmt.Sprintf(`{"cmd":%q}`, cmd))
	return c
}
