package temporalexamples

import (
	"fmt"
	"strconv"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The workflows behind the fixture tools of the official MCP conformance suite
// (@modelcontextprotocol/conformance), served by examples/conformance/tools.yaml.
const (
	GreetName            = "Greet"
	SlowComputeName      = "SlowCompute"
	FailingJobName       = "FailingJob"
	ProtocolErrorJobName = "ProtocolErrorJob"
)

// Failure types of the conformance workflows. ProtocolErrorType is listed under the tool's
// protocolErrors in the mapping, so taskgate ends that task failed with a JSON-RPC error;
// JobFailedType is an ordinary failure, a tool error.
const (
	JobFailedType     = "Conformance.JobFailed"
	ProtocolErrorType = "Conformance.ProtocolError"
)

// GreetInput is the input of Greet.
type GreetInput struct {
	Name string `json:"name"`
}

// GreetOutput is what Greet returns.
type GreetOutput struct {
	Name     string `json:"name"`
	Greeting string `json:"greeting"`
}

// Greet answers at once with a greeting for Name.
func Greet(_ workflow.Context, in GreetInput) (GreetOutput, error) {
	return GreetOutput{Name: in.Name, Greeting: fmt.Sprintf("Hello, %s!", in.Name)}, nil
}

// SlowComputeInput is the input of SlowCompute.
type SlowComputeInput struct {
	Seconds float64 `json:"seconds"`
	Label   string  `json:"label"`
}

// SlowComputeOutput is what SlowCompute returns.
type SlowComputeOutput struct {
	Label   string  `json:"label"`
	Seconds float64 `json:"seconds"`
	Result  string  `json:"result"`
}

// SlowCompute sleeps Seconds on a durable timer, then returns a result naming Label. A
// cancellation request ends it CANCELED, never COMPLETED or FAILED: the timer returns the
// cancellation, and a request that lands after the timer fired is still honoured before returning.
func SlowCompute(ctx workflow.Context, in SlowComputeInput) (SlowComputeOutput, error) {
	if err := sleepSeconds(ctx, in.Seconds); err != nil {
		return SlowComputeOutput{}, err
	}
	if err := ctx.Err(); err != nil {
		return SlowComputeOutput{}, err
	}
	secs := strconv.FormatFloat(in.Seconds, 'f', -1, 64)
	return SlowComputeOutput{Label: in.Label, Seconds: in.Seconds,
		Result: fmt.Sprintf("computed %q in %s s", in.Label, secs)}, nil
}

// JobInput is the input of FailingJob and ProtocolErrorJob: they take no arguments.
type JobInput struct{}

// FailingJobDelay is how long FailingJob works before it fails.
const FailingJobDelay = 1.0

// FailingJob works about a second, then fails with a non-retryable application error of type
// JobFailedType: a failure of the tool's work, which MCP reports as a tool error.
func FailingJob(ctx workflow.Context, _ JobInput) error {
	if err := sleepSeconds(ctx, FailingJobDelay); err != nil {
		return err
	}
	return temporal.NewNonRetryableApplicationError("the job failed: its input could not be processed", JobFailedType, nil)
}

// ProtocolErrorJob fails at once with a non-retryable application error of type
// ProtocolErrorType, which the mapping declares a protocol error.
func ProtocolErrorJob(_ workflow.Context, _ JobInput) error {
	return temporal.NewNonRetryableApplicationError("internal failure: the job could not produce a result", ProtocolErrorType, nil)
}
