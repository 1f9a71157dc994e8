package temporalexamples

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Activity names, as SummarizeDataset calls them.
const (
	validateActivity = "ValidateDataset"
	statsActivity    = "ComputeStats"
	renderActivity   = "RenderSummary"
)

// InvalidDatasetType is the error type SummarizeDataset fails with when its input cannot be
// summarized.
const InvalidDatasetType = "Dataset.Invalid"

// Dataset is the input of SummarizeDataset.
type Dataset struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
	// StepSeconds is a pause between the steps, so that the workflow runs long enough to be watched.
	StepSeconds float64 `json:"stepSeconds"`
}

// Stats are the statistics of one dataset.
type Stats struct {
	Count  int     `json:"count"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
}

// Summary is what SummarizeDataset returns: the statistics and a markdown rendering of them.
type Summary struct {
	Name string `json:"name"`
	Stats
	Summary string `json:"summary"`
}

// SummarizeDataset validates a dataset, computes its statistics and renders a markdown summary,
// each step an activity with retries, pausing StepSeconds between steps. It fails with an
// application error of type InvalidDatasetType when the dataset has no values.
func SummarizeDataset(ctx workflow.Context, in Dataset) (Summary, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        10 * time.Second,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{InvalidDatasetType},
		},
	})
	if err := workflow.ExecuteActivity(ctx, validateActivity, in).Get(ctx, nil); err != nil {
		return Summary{}, err
	}
	if err := sleepSeconds(ctx, in.StepSeconds); err != nil {
		return Summary{}, err
	}
	var st Stats
	if err := workflow.ExecuteActivity(ctx, statsActivity, in.Values).Get(ctx, &st); err != nil {
		return Summary{}, err
	}
	if err := sleepSeconds(ctx, in.StepSeconds); err != nil {
		return Summary{}, err
	}
	var md string
	if err := workflow.ExecuteActivity(ctx, renderActivity, in.Name, st).Get(ctx, &md); err != nil {
		return Summary{}, err
	}
	return Summary{Name: in.Name, Stats: st, Summary: md}, nil
}

// ValidateDataset rejects a dataset that cannot be summarized, with a non-retryable error of type
// InvalidDatasetType.
func ValidateDataset(_ context.Context, in Dataset) error {
	if len(in.Values) == 0 {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("dataset %q has no values: pass at least one number in values", in.Name),
			InvalidDatasetType, nil)
	}
	return nil
}

// ComputeStats computes the statistics of values, which must not be empty. The median is the
// middle value, or the mean of the two middle values when the count is even.
func ComputeStats(_ context.Context, values []float64) (Stats, error) {
	if len(values) == 0 {
		return Stats{}, temporal.NewNonRetryableApplicationError("no values to compute statistics of", InvalidDatasetType, nil)
	}
	sorted := slices.Sorted(slices.Values(values))
	sum := 0.0
	for _, v := range sorted {
		sum += v
	}
	n := len(sorted)
	median := sorted[n/2]
	if n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return Stats{Count: n, Min: sorted[0], Max: sorted[n-1], Mean: sum / float64(n), Median: median}, nil
}

// RenderSummary renders the statistics of the dataset name as a markdown table.
func RenderSummary(_ context.Context, name string, st Stats) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", name)
	b.WriteString("| count | min | max | mean | median |\n")
	b.WriteString("|------:|----:|----:|-----:|-------:|\n")
	fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", st.Count, num(st.Min), num(st.Max), num(st.Mean), num(st.Median))
	return b.String(), nil
}

// num prints a number rounded to four decimals, without trailing zeros.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64) }
