package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hitl-dev/hitl/contrib/temporal/agentrun"
)

// BenchmarkWaitingRuns starts HITL_TEMPORAL_BENCH_RUNS runs (default 1000)
// that each stop for an approval, waits until all of them wait at once,
// reports the worker's and the dev server's resident memory then, answers
// all of them and reports the time until every run has finished. Run it
// once: go test ./e2e -run '^$' -bench WaitingRuns -benchtime 1x
func BenchmarkWaitingRuns(b *testing.B) {
	if temporal == "" {
		b.Skip("SKIP: " + skipWhy)
	}
	n := 1000
	if v := os.Getenv("HITL_TEMPORAL_BENCH_RUNS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("HITL_TEMPORAL_BENCH_RUNS=%q", v)
		}
	}
	for range b.N {
		benchOnce(b, n)
	}
}

func benchOnce(b *testing.B, n int) {
	srv := startServer(b)
	s := newSite(b, srv, approveAgent)
	w := s.worker()
	c, err := client.Dial(client.Options{HostPort: srv.addr(), Logger: nopLogger{}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	// Each run in its own directory: the approved command writes there.
	ids := make([]string, n)
	begin := time.Now()
	each(n, 16, func(i int) {
		dir := filepath.Join(s.dir, "runs", strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Error(err)
			return
		}
		ids[i] = fmt.Sprintf("bench-%d", i)
		in := agentrun.Input{AgentFile: filepath.Join(s.dir, "agent.yaml"), WorkingDir: dir}
		if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: ids[i], TaskQueue: s.queue}, agentrun.WorkflowName, in); err != nil {
			b.Error(err)
		}
	})
	waitAll(b, c, ids, agentrun.StatusWaiting)
	b.ReportMetric(time.Since(begin).Seconds(), "s-to-all-waiting")
	wRSS, sRSS := rss(w.cmd.Process.Pid), treeRSS(srv.cmd.Process.Pid)
	b.ReportMetric(float64(wRSS)/(1<<20), "MiB-worker-RSS")
	b.ReportMetric(float64(sRSS)/(1<<20), "MiB-server-RSS")
	b.Logf("%d runs waiting at once: worker RSS %d MiB, server RSS %d MiB (after %s)", n, wRSS>>20, sRSS>>20, time.Since(begin).Round(time.Second))

	begin = time.Now()
	each(n, 16, func(i int) {
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: ids[i], UpdateName: agentrun.UpdateAnswer,
			Args: []any{agentrun.AnswerArg([]byte(approveOnce))}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(ctx, nil)
		}
		if err != nil {
			b.Error(err)
		}
	})
	answered := time.Since(begin)
	each(n, 32, func(i int) {
		var res agentrun.Result
		if err := c.GetWorkflow(ctx, ids[i], "").Get(ctx, &res); err != nil || res.ExitCode != 0 {
			b.Errorf("%s: %+v %v", ids[i], res, err)
		}
	})
	b.ReportMetric(answered.Seconds(), "s-to-answer-all")
	b.ReportMetric(time.Since(begin).Seconds(), "s-answers-to-all-finished")
	b.Logf("%d answers sent in %s; all %d runs finished %s after the first answer", n, answered.Round(time.Millisecond), n, time.Since(begin).Round(time.Millisecond))
	for i := range n {
		if got, _ := os.ReadFile(filepath.Join(s.dir, "runs", strconv.Itoa(i), "count")); string(got) != "ran\n" {
			b.Fatalf("run %d: count %q", i, got)
		}
	}
}

// each runs f(0..n-1) on k goroutines.
func each(n, k int, f func(int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range k {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func waitAll(b *testing.B, c client.Client, ids []string, status string) {
	pending := append([]string(nil), ids...)
	deadline := time.Now().Add(60 * time.Minute)
	for len(pending) > 0 {
		if time.Now().After(deadline) {
			b.Fatalf("%d runs never reached %s", len(pending), status)
		}
		var mu sync.Mutex
		var left []string
		each(len(pending), 16, func(i int) {
			v, err := c.QueryWorkflow(context.Background(), pending[i], "", agentrun.QueryState)
			var st agentrun.State
			if err == nil {
				err = v.Get(&st)
			}
			if err != nil || st.Status != status {
				mu.Lock()
				left = append(left, pending[i])
				mu.Unlock()
			}
		})
		pending = left
		if len(pending) > 0 {
			time.Sleep(2 * time.Second)
		}
	}
}

// rss is a process's resident memory, in bytes.
func rss(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// treeRSS is the resident memory of pid and its children (the dev server
// runs as one process; its children, if any, count too).
func treeRSS(pid int) int64 {
	total := rss(pid)
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	for _, f := range strings.Fields(string(data)) {
		if c, err := strconv.Atoi(f); err == nil {
			total += treeRSS(c)
		}
	}
	return total
}
