package mcpserver_test

import (
	"context"
	"math"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
)

// TestNothingIsKeptPerTask starts 1,000 tasks and shows that taskgate keeps nothing per task: no
// goroutine and no memory grow with the number of tasks in flight. The tasks run on a queue that no
// worker polls, so that no worker's cache shares the measured process. The cache of readings (a
// start is a first reading) is bounded by EndedCacheSize: it is kept below the warm-up here, so
// that what the test measures is what would grow without bound.
func TestNothingIsKeptPerTask(t *testing.T) {
	e := newEnvConfig(t, func(tc *tasks.Config, _ *mcpserver.Config) { tc.EndedCacheSize = 100 })
	c := e.client(ext)
	start := func(n int) []string {
		ids := make([]string, n)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for i := range n {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				ids[i] = call(t, c, "echo_unpolled", map[string]any{"seconds": 3600, "text": "in flight"})["taskId"].(string)
			}()
		}
		wg.Wait()
		return ids
	}
	// Warm up connections and pools at the same concurrency, so that only per-task costs remain.
	warm := start(300)
	goroutines, heap := settle()
	const n = 1000
	ids := start(n)
	goroutines2, heap2 := settle()
	held := 0 // the test itself keeps the ids, for the clean-up
	for _, id := range ids {
		held += len(id)
	}
	grown := int64(heap2) - int64(heap) - int64(held)
	ids = append(ids, warm...)
	t.Logf("after %d tasks in flight: goroutines %d -> %d, heap %d -> %d bytes, less %d bytes of ids the test holds: %+d bytes per task",
		n, goroutines, goroutines2, heap, heap2, held, grown/n)
	if goroutines2-goroutines > 20 {
		t.Errorf("goroutines grew by %d with %d tasks in flight", goroutines2-goroutines, n)
	}
	// What remains is allocation rounding of the held ids; any per-task record would hold at least
	// the id or the workflow id (well over 100 bytes each).
	if grown > 100*n {
		t.Errorf("heap grew by %d bytes for %d tasks in flight", grown, n)
	}

	// Every id still resolves, from the engine alone.
	for _, id := range ids[:20] {
		waitFor(t, c, id, "working")
	}
	for _, id := range ids {
		wf, run := e.workflow(t, id)
		testenv.As[client.Client](t, e.engine).TerminateWorkflow(context.Background(), wf, run, "test cleanup")
	}
}

// settle lets what the last requests left behind go, and reads the goroutines and the live heap:
// the least of three reads after a collection, so that what other goroutines of the test process
// (another test's worker, a sweep) allocate meanwhile does not count.
func settle() (int, uint64) {
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond) // let closed connections' goroutines exit
	least := uint64(math.MaxUint64)
	for range 3 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		least = min(least, m.HeapAlloc)
		time.Sleep(50 * time.Millisecond)
	}
	return runtime.NumGoroutine(), least
}
