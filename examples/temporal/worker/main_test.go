package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
)

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "worker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestWorkerServesTheExamples: the command polls taskgate-examples with the TEMPORAL_* variables
// and runs an example workflow to its end.
func TestWorkerServesTheExamples(t *testing.T) {
	addr := testenv.TemporalAddress(t)
	cmd := exec.Command(build(t))
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+addr, "TEMPORAL_NAMESPACE=default")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	c, err := client.Dial(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	identity := fmt.Sprintf("%d@", cmd.Process.Pid)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		d, err := c.DescribeTaskQueue(t.Context(), temporalexamples.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		polled := false
		for _, p := range d.GetPollers() {
			polled = polled || strings.HasPrefix(p.GetIdentity(), identity)
		}
		if err == nil && polled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker (pid %d) does not poll %s: %v, %v", cmd.Process.Pid, temporalexamples.TaskQueue, d.GetPollers(), err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: temporalexamples.TaskQueue}, temporalexamples.WaitAndEchoName,
		map[string]any{"seconds": 0, "text": "from the example worker"})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Text string }
	if err := run.Get(ctx, &out); err != nil || out.Text != "from the example worker" {
		t.Fatalf("WaitAndEcho: %+v, %v", out, err)
	}
}

func TestWorkerWithoutAServer(t *testing.T) {
	cmd := exec.Command(build(t))
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS=127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	const want = "worker: connecting to the Temporal frontend at 127.0.0.1:1: "
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.HasPrefix(string(out), want) || !strings.HasSuffix(string(out), "; set TEMPORAL_ADDRESS\n") {
		t.Fatalf("exit %v, output %q; want 1 and %q...", err, out, want)
	}
}
