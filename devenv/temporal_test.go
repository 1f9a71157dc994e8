package devenv_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/taskgate/taskgate/internal/testenv"
)

// TestTheDevServerOutlivesCancelledCalls: the Temporal CLI that scripts/with-engines and taskgate dev
// build serves on after thousands of calls that their callers' deadlines cut short. The release's
// own SQLite driver (modernc.org/sqlite v1.34.1) answers every query "interrupted (9)" after a few
// seconds of them, until the server restarts: tests that cancel calls then failed others at random.
func TestTheDevServerOutlivesCancelledCalls(t *testing.T) {
	srv, err := testsuite.StartDevServer(t.Context(), testsuite.DevServerOptions{
		ExistingPath: testenv.TemporalCLI(t),
		DBFilename:   filepath.Join(t.TempDir(), "temporal.db"),
		LogLevel:     "error",
		Stdout:       io.Discard, Stderr: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	c := srv.Client()
	describe := func(ctx context.Context) error {
		_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"})
		return err
	}

	var interrupted, calls atomic.Int64
	end := time.Now().Add(8 * time.Second)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for time.Now().Before(end) {
				ctx, cancel := context.WithTimeout(t.Context(), time.Duration(rand.IntN(3000))*time.Microsecond)
				id := fmt.Sprintf("cut-%d", rand.IntN(200))
				var err error
				switch rand.IntN(3) {
				case 0:
					_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "no-worker"}, "Nothing")
				case 1:
					_, err = c.DescribeWorkflowExecution(ctx, id, "")
				default:
					err = describe(ctx)
				}
				cancel()
				calls.Add(1)
				if err != nil && strings.Contains(err.Error(), "interrupted (9)") {
					interrupted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := interrupted.Load(); n > 0 {
		t.Errorf("%d of %d calls answered interrupted (9)", n, calls.Load())
	}
	// The namespace's rate limit may refuse calls for a moment after the storm.
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		last = describe(ctx)
		cancel()
		if last == nil {
			return
		}
	}
	t.Fatalf("the server no longer answers after %d cut calls: %v", calls.Load(), last)
}
