package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

// Figure 4: what tasks in flight cost a taskgate process.

// unitDelta rows are differences, which may be negative.
const unitDelta = "MB (delta)"

type memSnapshot struct {
	tasks          int
	rss, hwm, heap float64 // MB
	goroutines     int
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }

func (b *bench) memoryFigure(ctx context.Context) error {
	b.logf("memory (figure 4)")
	var cfg childConfig
	if b.opts.memoryHeap != "" {
		cfg.MemProfileRate = 1 // every allocation: exact bytes and objects per task
	}
	c, err := b.startChild(ctx, "memory", cfg)
	if err != nil {
		return err
	}
	client := b.modern(c.endpoint())
	const concurrency = 16
	// Warm-up at the concurrency of the starts, with no task: connections, pools and the
	// request path exist before the baseline.
	err = parallel(4*concurrency, concurrency, func(int) error {
		if _, err := call(ctx, client, "tools/list", nil); err != nil {
			return err
		}
		_, rerr, err := client.Call(ctx, "tasks/get", map[string]any{"taskId": "tg1.not-a-task"})
		if err == nil && rerr == nil {
			err = errors.New("tasks/get of a made-up id answered a task")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	measure := func(n int) (memSnapshot, error) {
		// The load generator's idle connections (and the server goroutines serving them) go, so
		// that only what the tasks cost remains.
		b.http.CloseIdleConnections()
		time.Sleep(300 * time.Millisecond)
		rss, hwm, err := memory(c.pid())
		if err != nil {
			return memSnapshot{}, err
		}
		cc, err := c.counts("?gc=1")
		if err != nil {
			return memSnapshot{}, err
		}
		if b.opts.memoryHeap != "" {
			// After the measure, as it would be read without the profile: the profile's
			// handler collects the garbage again before it writes.
			path := b.profilePath(b.opts.memoryHeap, strconv.Itoa(n))
			if err := c.get("/debug/bench/heap?file="+url.QueryEscape(path), nil); err != nil {
				return memSnapshot{}, err
			}
			b.logf("  heap profile at %d tasks in flight: %s (go tool pprof -sample_index=inuse_space -top %s)", n, path, path)
		}
		return memSnapshot{tasks: n, rss: mb(rss), hwm: mb(hwm), heap: mb(int64(cc.HeapInuse)), goroutines: cc.Goroutines}, nil
	}
	base, err := measure(0)
	if err != nil {
		return err
	}
	b.addMemory("0 tasks in flight", base)
	var ids []string
	for _, n := range b.opts.memoryTasks {
		more := n - len(ids)
		t0 := time.Now()
		fresh, err := b.startMany(ctx, client, more, concurrency)
		if err != nil {
			return err
		}
		started := time.Since(t0)
		// Every task is polled once, so that whatever a poll might leave behind is there too.
		t0 = time.Now()
		if err := parallel(len(fresh), concurrency, func(i int) error {
			_, err := get(ctx, client, fresh[i], "working")
			return err
		}); err != nil {
			return fmt.Errorf("polling the tasks in flight: %w", err)
		}
		polled := time.Since(t0)
		ids = append(ids, fresh...)
		s, err := measure(n)
		if err != nil {
			return err
		}
		b.addMemory(fmt.Sprintf("%d tasks in flight", n), s, base)
		b.res.add(4, fmt.Sprintf("%d tasks in flight: RSS added since 0 tasks", n), unitDelta, math.NaN(), s.rss-base.rss)
		b.res.add(4, fmt.Sprintf("%d tasks in flight: Go heap added since 0 tasks", n), unitDelta, math.NaN(), s.heap-base.heap)
		b.logf("  %d tasks in flight (started %d in %s, polled in %s): RSS %.1f MB (peak %.1f), heap %.1f MB, %d goroutines; at 0 tasks: RSS %.1f MB, heap %.1f MB, %d goroutines",
			n, more, started.Round(time.Millisecond), polled.Round(time.Millisecond), s.rss, s.hwm, s.heap, s.goroutines, base.rss, base.heap, base.goroutines)
	}
	b.res.note(4, "A fresh taskgate process (default FreshFor, rate limits off), warmed up with tools/list and tasks/get of a made-up id at the start concurrency (16), then measured with 0 tasks; then tasks started through it (tools/call of WaitAndEcho on a Temporal queue no worker polls, so they stay in flight; 16 at a time) and each polled once with tasks/get, measured again at each step. Direct column: the same process at 0 tasks; ratio = at N / at 0.")
	b.res.note(4, "Before each measure the load generator closes its idle connections and waits 300 ms. RSS and peak RSS: VmRSS and VmHWM from /proc/PID/status of the taskgate process (the peak includes the starts' bursts). Goroutines: runtime.NumGoroutine() from the bench build's debug endpoint (GET /debug/bench on a loopback listener of the child; it also serves net/http/pprof), which counts its own request's goroutines at every step alike. Go heap: HeapInuse after a forced GC, read after RSS. One pass (no repetitions).")
	return nil
}

// addMemory records one step of the memory figure against the baseline (if any).
func (b *bench) addMemory(label string, s memSnapshot, base ...memSnapshot) {
	d := func(f func(memSnapshot) float64) float64 {
		if len(base) == 0 {
			return math.NaN()
		}
		return f(base[0])
	}
	b.res.add(4, label+": RSS", "MB", d(func(m memSnapshot) float64 { return m.rss }), s.rss)
	b.res.add(4, label+": peak RSS", "MB", d(func(m memSnapshot) float64 { return m.hwm }), s.hwm)
	b.res.add(4, label+": goroutines", "goroutines", d(func(m memSnapshot) float64 { return float64(m.goroutines) }), float64(s.goroutines))
	b.res.add(4, label+": Go heap in use after GC", "MB", d(func(m memSnapshot) float64 { return m.heap }), s.heap)
}

// startMany starts n running tasks through client, concurrency at a time; they are ended when the
// bench ends.
func (b *bench) startMany(ctx context.Context, client *mcpclient.Client, n, concurrency int) ([]string, error) {
	ids := make([]string, n)
	err := parallel(n, concurrency, func(i int) error {
		var err error
		ids[i], err = b.start(ctx, client, toolRunning, map[string]any{"seconds": 3 * 3600, "text": "in flight"})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("starting tasks in flight: %w", err)
	}
	return ids, nil
}
