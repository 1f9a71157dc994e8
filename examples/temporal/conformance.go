package temporalexamples

import (
	"encoding/json"
	"fmt"
	"strconv"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/taskgate/taskgate/adapters/temporal/taskgateflow"
)

// The workflows behind the fixture tools of the official MCP conformance suite
// (@modelcontextprotocol/conformance), served by examples/conformance/tools.yaml.
const (
	GreetName            = "Greet"
	SlowComputeName      = "SlowCompute"
	FailingJobName       = "FailingJob"
	ProtocolErrorJobName = "ProtocolErrorJob"
	ConfirmDeleteName    = "ConfirmDelete"
	MultiInputName       = "MultiInput"
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

// ConfirmDeleteInput is the input of ConfirmDelete.
type ConfirmDeleteInput struct {
	Filename string `json:"filename"`
}

// ConfirmDeleteOutput is what ConfirmDelete returns.
type ConfirmDeleteOutput struct {
	Filename string `json:"filename"`
	Deleted  bool   `json:"deleted"`
}

// ConfirmDeleteSchema is the schema of ConfirmDelete's question.
var ConfirmDeleteSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Delete","description":"Delete the file?"}},"required":["confirm"]}`)

// ConfirmDelete asks "Delete FILENAME?" (key "confirm", ConfirmDeleteSchema) and completes with
// what was decided: deleted when the answer is {"confirm": true}, kept otherwise (declined or
// dismissed too). Nothing is really deleted.
func ConfirmDelete(ctx workflow.Context, in ConfirmDeleteInput) (ConfirmDeleteOutput, error) {
	out := ConfirmDeleteOutput{Filename: in.Filename}
	inbox, err := taskgateflow.NewInbox(ctx, taskgateflow.Options{})
	if err != nil {
		return out, err
	}
	a, err := inbox.Ask(ctx, "confirm", fmt.Sprintf("Delete %s?", in.Filename), ConfirmDeleteSchema)
	if err != nil {
		return out, err
	}
	var answer struct {
		Confirm bool `json:"confirm"`
	}
	out.Deleted = a.Decode(&answer) == nil && answer.Confirm
	return out, nil
}

// MultiInputOutput is what MultiInput returns.
type MultiInputOutput struct {
	Name      string `json:"name"`
	Confirmed bool   `json:"confirmed"`
}

// NameSchema is the schema of MultiInput's question "name". Like ConfirmSchema, it does not forbid
// other properties: the conformance suite answers both questions with {"name": ..., "confirm": ...}.
var NameSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name"}},"required":["name"]}`)

// MultiInput asks two questions at once, "name" (NameSchema) and "confirm" (ConfirmSchema),
// and completes once both are answered, in either order, with the name and whether it was
// confirmed. A declined or dismissed question counts as no name, not confirmed.
func MultiInput(ctx workflow.Context, _ JobInput) (MultiInputOutput, error) {
	inbox, err := taskgateflow.NewInbox(ctx, taskgateflow.Options{})
	if err != nil {
		return MultiInputOutput{}, err
	}
	var out MultiInputOutput
	var nameErr error
	wg := workflow.NewWaitGroup(ctx)
	wg.Add(1)
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer wg.Done()
		var a taskgateflow.Answer
		if a, nameErr = inbox.Ask(ctx, "name", "What is your name?", NameSchema); nameErr == nil && a.Accepted() {
			var v struct{ Name string }
			_ = a.Decode(&v) // validated against NameSchema
			out.Name = v.Name
		}
	})
	a, err := inbox.Ask(ctx, "confirm", "Confirm the request?", ConfirmSchema)
	wg.Wait(ctx)
	if err != nil {
		return MultiInputOutput{}, err
	}
	if nameErr != nil {
		return MultiInputOutput{}, nameErr
	}
	var v struct{ Confirm bool }
	out.Confirmed = a.Decode(&v) == nil && v.Confirm
	return out, nil
}
