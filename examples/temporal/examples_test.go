package temporalexamples_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
)

func TestComputeStats(t *testing.T) {
	tests := []struct {
		values []float64
		want   temporalexamples.Stats
	}{
		{[]float64{5}, temporalexamples.Stats{Count: 1, Min: 5, Max: 5, Mean: 5, Median: 5}},
		{[]float64{3, 1, 2}, temporalexamples.Stats{Count: 3, Min: 1, Max: 3, Mean: 2, Median: 2}},
		{[]float64{4, -1, 10, 3}, temporalexamples.Stats{Count: 4, Min: -1, Max: 10, Mean: 4, Median: 3.5}},
	}
	for _, tc := range tests {
		got, err := temporalexamples.ComputeStats(context.Background(), tc.values)
		if err != nil || got != tc.want {
			t.Errorf("ComputeStats(%v) = %+v, %v; want %+v", tc.values, got, err, tc.want)
		}
	}
	var appErr *temporal.ApplicationError
	if _, err := temporalexamples.ComputeStats(context.Background(), nil); !errors.As(err, &appErr) || appErr.Type() != "Dataset.Invalid" {
		t.Errorf("ComputeStats(nil): error %v, want a Dataset.Invalid application error", err)
	}
}

func TestRenderSummary(t *testing.T) {
	st := temporalexamples.Stats{Count: 3, Min: 1, Max: 1000000, Mean: 333333.6666666667, Median: 0.5}
	got, err := temporalexamples.RenderSummary(context.Background(), "sizes", st)
	const want = "## sizes\n\n| count | min | max | mean | median |\n|------:|----:|----:|-----:|-------:|\n| 3 | 1 | 1000000 | 333333.6667 | 0.5 |\n"
	if err != nil || got != want {
		t.Errorf("RenderSummary = %q, %v; want %q", got, err, want)
	}
}

func TestValidateDataset(t *testing.T) {
	err := temporalexamples.ValidateDataset(context.Background(), temporalexamples.Dataset{Name: "empty"})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != "Dataset.Invalid" || !appErr.NonRetryable() ||
		appErr.Message() != `dataset "empty" has no values: pass at least one number in values` {
		t.Errorf("ValidateDataset(no values) = %v, want a non-retryable Dataset.Invalid error", err)
	}
	if err := temporalexamples.ValidateDataset(context.Background(), temporalexamples.Dataset{Values: []float64{1}}); err != nil {
		t.Errorf("ValidateDataset(one value) = %v", err)
	}
}

// TestWorkflows runs each example workflow on a real server, through an in-process worker.
func TestWorkflows(t *testing.T) {
	addr := testenv.TemporalAddress(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	queue := "taskgate-examples-test-" + uuid.NewString()
	w := worker.New(c, queue, worker.Options{})
	temporalexamples.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	run := func(t *testing.T, workflow string, in, out any) error {
		t.Helper()
		wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, workflow, in)
		if err != nil {
			t.Fatal(err)
		}
		return wr.Get(ctx, out)
	}

	t.Run("WaitAndEcho", func(t *testing.T) {
		var out temporalexamples.EchoOutput
		err := run(t, "WaitAndEcho", map[string]any{"seconds": 0.1, "text": "hi"}, &out)
		if err != nil || out.Text != "hi" {
			t.Errorf("WaitAndEcho = %+v, %v; want text hi", out, err)
		}
	})
	t.Run("WaitAndFail", func(t *testing.T) {
		err := run(t, "WaitAndFail", map[string]any{"seconds": 0.1, "reason": "no luck"}, nil)
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != "Example.Failure" || appErr.Message() != "no luck" {
			t.Errorf("WaitAndFail: error %v, want Example.Failure %q", err, "no luck")
		}
	})
	t.Run("ContinueAsNewEcho", func(t *testing.T) {
		var out temporalexamples.EchoOutput
		err := run(t, "ContinueAsNewEcho", map[string]any{"seconds": 0, "text": "again"}, &out)
		if err != nil || out.Text != "again" {
			t.Errorf("ContinueAsNewEcho = %+v, %v; want text again", out, err)
		}
	})
	t.Run("Greet", func(t *testing.T) {
		var out temporalexamples.GreetOutput
		err := run(t, "Greet", map[string]any{"name": "Alice"}, &out)
		if want := (temporalexamples.GreetOutput{Name: "Alice", Greeting: "Hello, Alice!"}); err != nil || out != want {
			t.Errorf("Greet = %+v, %v; want %+v", out, err, want)
		}
	})
	t.Run("SlowCompute", func(t *testing.T) {
		start := time.Now()
		var out temporalexamples.SlowComputeOutput
		err := run(t, "SlowCompute", map[string]any{"seconds": 1, "label": "x"}, &out)
		want := temporalexamples.SlowComputeOutput{Label: "x", Seconds: 1, Result: `computed "x" in 1 s`}
		if err != nil || out != want {
			t.Errorf("SlowCompute = %+v, %v; want %+v", out, err, want)
		}
		if d := time.Since(start); d < time.Second {
			t.Errorf("SlowCompute of 1 s returned after %v", d)
		}
		if err := run(t, "SlowCompute", map[string]any{"seconds": 0, "label": "now"}, &out); err != nil || out.Label != "now" {
			t.Errorf("SlowCompute(seconds 0) = %+v, %v", out, err)
		}
	})
	t.Run("SlowComputeCancelled", func(t *testing.T) {
		// The conformance suite cancels a running slow_compute and requires it to end cancelled,
		// neither completed nor failed.
		wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, "SlowCompute",
			map[string]any{"seconds": 60, "label": "to cancel"})
		if err != nil {
			t.Fatal(err)
		}
		waitRunning(ctx, t, c, wr)
		if err := c.CancelWorkflow(ctx, wr.GetID(), wr.GetRunID()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := wr.Get(ctx, nil); !temporal.IsCanceledError(err) {
			t.Errorf("cancelled SlowCompute: error %v, want a cancellation", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("cancelled SlowCompute took %v to end", d)
		}
		if st := status(ctx, t, c, wr); st != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
			t.Errorf("cancelled SlowCompute ended %v, want CANCELED", st)
		}
	})
	t.Run("FailingJob", func(t *testing.T) {
		start := time.Now()
		wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, "FailingJob", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		err = wr.Get(ctx, nil)
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != temporalexamples.JobFailedType || !appErr.NonRetryable() {
			t.Errorf("FailingJob: error %v, want a non-retryable %s", err, temporalexamples.JobFailedType)
		}
		if d := time.Since(start); d < time.Second || d > 10*time.Second {
			t.Errorf("FailingJob failed after %v, want about 1 s", d)
		}
		if st := status(ctx, t, c, wr); st != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
			t.Errorf("FailingJob ended %v, want FAILED", st)
		}
	})
	t.Run("ProtocolErrorJob", func(t *testing.T) {
		err := run(t, "ProtocolErrorJob", map[string]any{}, nil)
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != temporalexamples.ProtocolErrorType || !appErr.NonRetryable() {
			t.Errorf("ProtocolErrorJob: error %v, want a non-retryable %s", err, temporalexamples.ProtocolErrorType)
		}
	})
	t.Run("SummarizeDataset", func(t *testing.T) {
		var out temporalexamples.Summary
		err := run(t, "SummarizeDataset", map[string]any{"name": "n", "values": []float64{2, 4, 9}}, &out)
		want := temporalexamples.Summary{
			Name:    "n",
			Stats:   temporalexamples.Stats{Count: 3, Min: 2, Max: 9, Mean: 5, Median: 4},
			Summary: "## n\n\n| count | min | max | mean | median |\n|------:|----:|----:|-----:|-------:|\n| 3 | 2 | 9 | 5 | 4 |\n",
		}
		if err != nil || !reflect.DeepEqual(out, want) {
			t.Errorf("SummarizeDataset = %+v, %v; want %+v", out, err, want)
		}
	})
}

func status(ctx context.Context, t *testing.T, c client.Client, wr client.WorkflowRun) enumspb.WorkflowExecutionStatus {
	t.Helper()
	d, err := c.DescribeWorkflow(ctx, wr.GetID(), wr.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	return d.RawResponse.GetWorkflowExecutionInfo().GetStatus()
}

// waitRunning waits until a worker has run the workflow's first task, so that a cancellation
// reaches a workflow that is sleeping, not one that has not started.
func waitRunning(ctx context.Context, t *testing.T, c client.Client, wr client.WorkflowRun) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		iter := c.GetWorkflowHistory(ctx, wr.GetID(), wr.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				t.Fatal(err)
			}
			if ev.GetEventType() == enumspb.EVENT_TYPE_TIMER_STARTED {
				return
			}
		}
	}
	t.Fatal("the workflow started no timer within 10 s")
}
