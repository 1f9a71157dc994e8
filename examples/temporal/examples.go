// Package temporalexamples holds the Temporal workflows that taskgate's examples and tests serve:
// small ones whose timing and ending the caller controls (the conformance workflows, among them
// AskAndEcho and AskTwoAndEcho, which ask questions), SummarizeDataset, a realistic one built from
// activities with retries, ApproveDeployment, which asks before it deploys, BuildRelease, which
// reports its progress, and the fixtures of the official MCP conformance suite (Greet,
// SlowCompute, FailingJob, ProtocolErrorJob, ConfirmDelete, MultiInput).
//
// A worker serves them after Register:
//
//	w := worker.New(c, temporalexamples.TaskQueue, worker.Options{})
//	temporalexamples.Register(w)
//	err := w.Run(worker.InterruptCh())
package temporalexamples

import (
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TaskQueue is the task queue the example mapping files name.
const TaskQueue = "taskgate-examples"

// The registered workflow type names, as mapping files name them.
const (
	WaitAndEchoName       = "WaitAndEcho"
	WaitAndFailName       = "WaitAndFail"
	ContinueAsNewEchoName = "ContinueAsNewEcho"
	SummarizeDatasetName  = "SummarizeDataset"
)

// Register registers every example workflow and activity on r (a worker).
func Register(r worker.Registry) {
	r.RegisterWorkflowWithOptions(WaitAndEcho, workflow.RegisterOptions{Name: WaitAndEchoName})
	r.RegisterWorkflowWithOptions(WaitAndFail, workflow.RegisterOptions{Name: WaitAndFailName})
	r.RegisterWorkflowWithOptions(ContinueAsNewEcho, workflow.RegisterOptions{Name: ContinueAsNewEchoName})
	r.RegisterWorkflowWithOptions(SummarizeDataset, workflow.RegisterOptions{Name: SummarizeDatasetName})
	r.RegisterWorkflowWithOptions(Greet, workflow.RegisterOptions{Name: GreetName})
	r.RegisterWorkflowWithOptions(SlowCompute, workflow.RegisterOptions{Name: SlowComputeName})
	r.RegisterWorkflowWithOptions(FailingJob, workflow.RegisterOptions{Name: FailingJobName})
	r.RegisterWorkflowWithOptions(ProtocolErrorJob, workflow.RegisterOptions{Name: ProtocolErrorJobName})
	r.RegisterWorkflowWithOptions(ConfirmDelete, workflow.RegisterOptions{Name: ConfirmDeleteName})
	r.RegisterWorkflowWithOptions(MultiInput, workflow.RegisterOptions{Name: MultiInputName})
	r.RegisterWorkflowWithOptions(AskAndEcho, workflow.RegisterOptions{Name: AskAndEchoName})
	r.RegisterWorkflowWithOptions(AskTwoAndEcho, workflow.RegisterOptions{Name: AskTwoAndEchoName})
	r.RegisterWorkflowWithOptions(ApproveDeployment, workflow.RegisterOptions{Name: ApproveDeploymentName})
	r.RegisterWorkflowWithOptions(BuildRelease, workflow.RegisterOptions{Name: BuildReleaseName})
	r.RegisterActivityWithOptions(RunStep, activity.RegisterOptions{Name: stepActivity})
	r.RegisterActivityWithOptions(ValidateDataset, activity.RegisterOptions{Name: validateActivity})
	r.RegisterActivityWithOptions(ComputeStats, activity.RegisterOptions{Name: statsActivity})
	r.RegisterActivityWithOptions(RenderSummary, activity.RegisterOptions{Name: renderActivity})
}

// EchoInput is the input of WaitAndEcho and ContinueAsNewEcho.
type EchoInput struct {
	Seconds float64 `json:"seconds"`
	Text    string  `json:"text"`
	// Continued is set by ContinueAsNewEcho on the run it continues into.
	Continued bool `json:"continued,omitempty"`
}

// EchoOutput is what the echo workflows return.
type EchoOutput struct {
	Text string `json:"text"`
}

// WaitAndEcho sleeps Seconds, then returns Text.
func WaitAndEcho(ctx workflow.Context, in EchoInput) (EchoOutput, error) {
	if err := sleepSeconds(ctx, in.Seconds); err != nil {
		return EchoOutput{}, err
	}
	return EchoOutput{Text: in.Text}, nil
}

// FailInput is the input of WaitAndFail.
type FailInput struct {
	Seconds float64 `json:"seconds"`
	Reason  string  `json:"reason"`
}

// FailureType is the error type WaitAndFail fails with.
const FailureType = "Example.Failure"

// WaitAndFail sleeps Seconds, then fails with a non-retryable application error of type
// FailureType whose message is Reason.
func WaitAndFail(ctx workflow.Context, in FailInput) error {
	if err := sleepSeconds(ctx, in.Seconds); err != nil {
		return err
	}
	return temporal.NewNonRetryableApplicationError(in.Reason, FailureType, nil)
}

// ContinueAsNewEcho does what WaitAndEcho does, spread over two runs: it sleeps Seconds, continues
// as new once, sleeps Seconds again in the new run, and returns Text from there.
func ContinueAsNewEcho(ctx workflow.Context, in EchoInput) (EchoOutput, error) {
	if err := sleepSeconds(ctx, in.Seconds); err != nil {
		return EchoOutput{}, err
	}
	if !in.Continued {
		in.Continued = true
		return EchoOutput{}, workflow.NewContinueAsNewError(ctx, ContinueAsNewEchoName, in)
	}
	return EchoOutput{Text: in.Text}, nil
}

// sleepSeconds sleeps a possibly fractional number of seconds; zero or less does not sleep.
func sleepSeconds(ctx workflow.Context, seconds float64) error {
	if seconds <= 0 {
		return nil
	}
	return workflow.Sleep(ctx, time.Duration(seconds*float64(time.Second)))
}
