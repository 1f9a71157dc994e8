package temporalexamples_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
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
