package restateexamples

import (
	"encoding/json"
	"fmt"
	"strconv"

	restate "github.com/restatedev/sdk-go"

	"github.com/taskgate/taskgate/adapters/restate/taskgatehandler"
)

// The handlers behind the fixture tools of the official MCP conformance suite
// (@modelcontextprotocol/conformance), served by examples/conformance-restate/tools.yaml: the same
// tools as the Temporal workflows of examples/conformance, on Restate.
const (
	Greet            = "Greet"
	SlowCompute      = "SlowCompute"
	FailingJob       = "FailingJob"
	ProtocolErrorJob = "ProtocolErrorJob"
	ConfirmDelete    = "ConfirmDelete"
	MultiInput       = "MultiInput"
)

// Failure names of the conformance handlers. ProtocolErrorName is listed under the tool's
// protocolErrors in the mapping, so taskgate ends that task failed with a JSON-RPC error;
// JobFailedName is an ordinary failure, a tool error.
const (
	JobFailedName     = "Conformance.JobFailed"
	ProtocolErrorName = "Conformance.ProtocolError"
)

// conformanceDefinitions are the conformance services, plain services where a task only runs,
// workflows where it asks.
func conformanceDefinitions() []restate.ServiceDefinition {
	return []restate.ServiceDefinition{
		restate.NewService(Greet, restate.WithDocumentation("Greets someone by name.")).
			Handler(RunHandler, restate.NewServiceHandler(greet)),
		restate.NewService(SlowCompute, restate.WithDocumentation("Works for the given number of seconds, then returns a result for the label.")).
			Handler(RunHandler, restate.NewServiceHandler(slowCompute)),
		restate.NewService(FailingJob, restate.WithDocumentation("Works for about a second, then fails.")).
			Handler(RunHandler, restate.NewServiceHandler(failingJob)),
		restate.NewService(ProtocolErrorJob, restate.WithDocumentation("Fails at once with an internal error.")).
			Handler(RunHandler, restate.NewServiceHandler(protocolErrorJob)),
		restate.NewWorkflow(ConfirmDelete, restate.WithDocumentation("Asks whether a file may be deleted.")).
			Handler(RunHandler, restate.NewWorkflowHandler(confirmDelete)),
		restate.NewWorkflow(MultiInput, restate.WithDocumentation("Asks two questions at once.")).
			Handler(RunHandler, restate.NewWorkflowHandler(multiInput)),
	}
}

// GreetInput is the input of Greet.
type GreetInput struct {
	Name string `json:"name"`
}

// GreetOutput is what Greet returns.
type GreetOutput struct {
	Name     string `json:"name"`
	Greeting string `json:"greeting"`
}

func greet(_ restate.Context, in GreetInput) (GreetOutput, error) {
	return GreetOutput{Name: in.Name, Greeting: fmt.Sprintf("Hello, %s!", in.Name)}, nil
}

// SlowComputeInput is the input of SlowCompute.
type SlowComputeInput struct {
	Seconds float64 `json:"seconds"`
	Label   string  `json:"label,omitempty"`
}

// SlowComputeOutput is what SlowCompute returns.
type SlowComputeOutput struct {
	Label   string  `json:"label"`
	Seconds float64 `json:"seconds"`
	Result  string  `json:"result"`
}

// slowCompute sleeps Seconds durably, then returns a result naming Label; a cancellation ends
// the sleep, and the invocation cancelled.
func slowCompute(ctx restate.Context, in SlowComputeInput) (SlowComputeOutput, error) {
	if err := sleepSeconds(ctx, in.Seconds); err != nil {
		return SlowComputeOutput{}, err
	}
	secs := strconv.FormatFloat(in.Seconds, 'f', -1, 64)
	return SlowComputeOutput{Label: in.Label, Seconds: in.Seconds, Result: fmt.Sprintf("computed %q in %s s", in.Label, secs)}, nil
}

// failingJob works about a second, then fails with JobFailedName: a failure of the tool's work,
// which MCP reports as a tool error.
func failingJob(ctx restate.Context, _ struct{}) (restate.Void, error) {
	if err := sleepSeconds(ctx, 1); err != nil {
		return restate.Void{}, err
	}
	return restate.Void{}, taskgatehandler.Fail(JobFailedName, "the job failed: its input could not be processed")
}

// protocolErrorJob fails at once with ProtocolErrorName, which the mapping declares a protocol
// error.
func protocolErrorJob(restate.Context, struct{}) (restate.Void, error) {
	return restate.Void{}, taskgatehandler.Fail(ProtocolErrorName, "internal failure: the job could not produce a result")
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

// confirmDelete asks "Delete FILENAME?" (key "confirm") and completes with what was decided:
// deleted when the answer is {"confirm": true}, kept otherwise. Nothing is really deleted.
func confirmDelete(ctx restate.WorkflowContext, in ConfirmDeleteInput) (ConfirmDeleteOutput, error) {
	out := ConfirmDeleteOutput{Filename: in.Filename}
	a, err := taskgatehandler.Ask(ctx, "confirm", fmt.Sprintf("Delete %s?", in.Filename), ConfirmDeleteSchema)
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

// multiInput asks "name" and "confirm" at once and completes once both are answered, in either
// order. A declined or dismissed question counts as no name, not confirmed.
func multiInput(ctx restate.WorkflowContext, _ struct{}) (MultiInputOutput, error) {
	name, err := taskgatehandler.Open(ctx, "name", "What is your name?", NameSchema)
	if err != nil {
		return MultiInputOutput{}, err
	}
	confirm, err := taskgatehandler.Open(ctx, "confirm", "Confirm the request?", ConfirmSchema)
	if err != nil {
		return MultiInputOutput{}, err
	}
	answers, err := taskgatehandler.Await(ctx, name, confirm)
	if err != nil {
		return MultiInputOutput{}, err
	}
	var out MultiInputOutput
	var n struct{ Name string }
	if answers["name"].Decode(&n) == nil {
		out.Name = n.Name
	}
	var c struct{ Confirm bool }
	out.Confirmed = answers["confirm"].Decode(&c) == nil && c.Confirm
	return out, nil
}
