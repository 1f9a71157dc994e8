package main

// The tests of the binary on a terminal run the built-in Temporal examples, which dev serves:
// cancelling with Ctrl-C is checked in the Temporal server itself.

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/temporal"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/taskcall"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/tasks/token"
)

const exampleMapping = "../../examples/temporal/tools.yaml"

// startWorker serves the example workflows from the test process, for the mappings that runCall
// and the binary serve with --config, and points those mappings at the test's Temporal server. It
// returns the worker's client.
func startWorker(t *testing.T) client.Client {
	t.Helper()
	addr := testenv.TemporalAddress(t)
	t.Setenv("TEMPORAL_ADDRESS", addr)
	e, err := temporal.New(t.Context(), temporal.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	var c client.Client
	driver.As(e, &c)
	w := worker.New(c, temporalexamples.TaskQueue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return c
}

var redrawn = regexp.MustCompile(`^([-\\|/]) wait_and_echo (\d+\.\d)s working: `)

func TestCallOnTerminal(t *testing.T) {
	startWorker(t)
	cmd, _, s := onTerminal(t, nil, "call", "wait_and_echo", "--args", `{"seconds": 3, "text": "hi"}`, "--config", exampleMapping)
	if code := exitStatus(t, cmd, s); code != 0 {
		t.Fatalf("exit status %d:\n%q", code, s.String())
	}
	out := s.String()
	frames, times := map[string]bool{}, []float64{}
	for _, redraw := range strings.Split(out, "\r") {
		if m := redrawn.FindStringSubmatch(redraw); m != nil {
			if !strings.HasSuffix(redraw, "\x1b[K") {
				t.Fatalf("a redraw does not clear the rest of the line: %q", redraw)
			}
			frames[m[1]] = true
			f, _ := strconv.ParseFloat(m[2], 64)
			times = append(times, f)
		}
	}
	if len(frames) < 2 {
		t.Errorf("the spinner did not turn: frames %v in\n%q", frames, out)
	}
	for i := 1; i < len(times); i++ {
		if times[i] < times[i-1] {
			t.Fatalf("the elapsed time went back from %.1fs to %.1fs", times[i-1], times[i])
		}
	}
	if len(times) == 0 || times[len(times)-1]-times[0] < 2 {
		t.Errorf("the elapsed time did not grow over the 3s task: %v", times)
	}
	if !regexp.MustCompile(`\rwait_and_echo \d+\.\ds completed: Completed \(COMPLETED\)\.\x1b\[K\r\n`).MatchString(out) {
		t.Errorf("no final status line:\n%q", out)
	}
	if !strings.Contains(out, "{\r\n  \"text\": \"hi\"\r\n}\r\n") {
		t.Errorf("no result:\n%q", out)
	}
}

// TestCallInterrupted: Ctrl-C on the terminal cancels the workflow behind the task. The task id
// printed is sealed with a key the test knows, so the test can open it to find the workflow.
func TestCallInterrupted(t *testing.T) {
	c := startWorker(t)
	key := token.NewKey("test")
	keys, err := token.ParseKeys(key)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := token.NewSealed(keys)
	if err != nil {
		t.Fatal(err)
	}
	cmd, tty, s := onTerminal(t, []string{"TASKGATE_TOKEN_KEYS=" + key},
		"call", "wait_and_echo", "--args", `{"seconds": 600, "text": "never"}`, "--config", exampleMapping)
	s.waitFor(t, regexp.MustCompile(`wait_and_echo \d+\.\ds working: Running \(RUNNING\)`))
	if _, err := tty.Write([]byte{3}); err != nil { // Ctrl-C: the line discipline sends SIGINT
		t.Fatal(err)
	}
	if code := exitStatus(t, cmd, s); code != taskcall.ExitInterrupted {
		t.Fatalf("exit status %d, want %d:\n%q", code, taskcall.ExitInterrupted, s.String())
	}
	id := s.waitFor(t, regexp.MustCompile(`\ncancelled (\S+)\r\n`))[1]
	claims, err := tokens.Open(id, time.Now())
	if err != nil {
		t.Fatalf("the printed task id %q does not open: %v", id, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		wf, run, _ := temporal.WorkflowOf(claims.Ref)
		d, err := c.DescribeWorkflow(ctx, wf, run)
		cancel()
		if err != nil {
			t.Fatalf("describing workflow %s: %v", claims.Ref, err)
		}
		info := d.RawResponse.GetWorkflowExecutionInfo()
		if info.GetType().GetName() != temporalexamples.WaitAndEchoName {
			t.Fatalf("workflow %s is a %s", claims.Ref, info.GetType().GetName())
		}
		if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow %s is %s 30s after Ctrl-C, want CANCELED", claims.Ref, info.GetStatus())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
