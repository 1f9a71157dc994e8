package temporalexamples

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/taskgate/taskgate/adapters"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/taskgate/taskgate/adapters/temporal/taskgateflow"
)

// The workflows that ask questions (package taskgateflow) and report progress.
const (
	AskAndEchoName        = "AskAndEcho"
	AskTwoAndEchoName     = "AskTwoAndEcho"
	ApproveDeploymentName = "ApproveDeployment"
	BuildReleaseName      = "BuildRelease"
	stepActivity          = "RunStep"
)

// ConfirmSchema is the schema of the answers AskAndEcho and AskTwoAndEcho wait for.
var ConfirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)

// The errors the asking workflows fail with when a question is declined or dismissed.
const (
	DeclinedType  = adapters.DeclinedError
	DismissedType = adapters.DismissedError
)

// AskInput is the input of AskAndEcho.
type AskInput struct {
	Message string `json:"message"`
}

// AskAndEcho asks one question, key "confirm", with the input's message and ConfirmSchema, and
// returns the accepted answer's content. A declined or dismissed question fails it with a
// non-retryable application error of type DeclinedType or DismissedType.
func AskAndEcho(ctx workflow.Context, in AskInput) (json.RawMessage, error) {
	inbox, err := taskgateflow.NewInbox(ctx, taskgateflow.Options{})
	if err != nil {
		return nil, err
	}
	return askAndEcho(ctx, inbox, "confirm", in.Message)
}

func askAndEcho(ctx workflow.Context, inbox *taskgateflow.Inbox, key, message string) (json.RawMessage, error) {
	a, err := inbox.Ask(ctx, key, message, ConfirmSchema)
	switch {
	case err != nil:
		return nil, err
	case a.Action == taskgateflow.Decline:
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the question %q was declined", key), DeclinedType, nil)
	case a.Action == taskgateflow.Cancel:
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the question %q was dismissed", key), DismissedType, nil)
	}
	return a.Content, nil
}

// AskTwoAndEcho asks two questions at once, keys "first" and "second", each with ConfirmSchema,
// and returns {"first": answer, "second": answer} once both are accepted; a declined or dismissed
// question ends it as in AskAndEcho.
func AskTwoAndEcho(ctx workflow.Context) (map[string]json.RawMessage, error) {
	inbox, err := taskgateflow.NewInbox(ctx, taskgateflow.Options{})
	if err != nil {
		return nil, err
	}
	keys := []string{"first", "second"}
	answers := make([]json.RawMessage, len(keys))
	errs := make([]error, len(keys))
	wg := workflow.NewWaitGroup(ctx)
	for i, key := range keys {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			answers[i], errs[i] = askAndEcho(ctx, inbox, key, fmt.Sprintf("%s question: confirm?", key))
		})
	}
	wg.Wait(ctx)
	out := map[string]json.RawMessage{}
	for i, key := range keys {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[key] = answers[i]
	}
	return out, nil
}

// DeploymentInput is the input of ApproveDeployment.
type DeploymentInput struct {
	Version string `json:"version"`
	Env     string `json:"env"`
	// StepSeconds is how long preparing and deploying take each.
	StepSeconds float64 `json:"stepSeconds"`
}

// Deployment is what ApproveDeployment returns.
type Deployment struct {
	Version  string `json:"version"`
	Env      string `json:"env"`
	Deployed bool   `json:"deployed"`
	Reason   string `json:"reason,omitempty"`
}

// ApprovalSchema is the schema of ApproveDeployment's question.
var ApprovalSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"approve":{"type":"boolean","title":"Approve","description":"Deploy this version now?"},` +
	`"reason":{"type":"string","title":"Reason","description":"Why, for the deployment log."}},"required":["approve"]}`)

// ApproveDeployment prepares a deployment, asks "Deploy VERSION to ENV?" (key "approve",
// ApprovalSchema), and deploys when approved. Not approved, declined or dismissed, it ends without
// deploying: a decision, not a failure.
func ApproveDeployment(ctx workflow.Context, in DeploymentInput) (Deployment, error) {
	out := Deployment{Version: in.Version, Env: in.Env}
	inbox, err := taskgateflow.NewInbox(ctx, taskgateflow.Options{})
	if err != nil {
		return out, err
	}
	if err := progress(ctx, fmt.Sprintf("preparing %s for %s", in.Version, in.Env), in.StepSeconds); err != nil {
		return out, err
	}
	if err := taskgateflow.Progress(ctx, ""); err != nil {
		return out, err
	}
	a, err := inbox.Ask(ctx, "approve", fmt.Sprintf("Deploy %s to %s?", in.Version, in.Env), ApprovalSchema)
	if err != nil {
		return out, err
	}
	var answer struct {
		Approve bool   `json:"approve"`
		Reason  string `json:"reason"`
	}
	switch {
	case a.Action == taskgateflow.Decline:
		out.Reason = "declined"
		return out, nil
	case a.Action == taskgateflow.Cancel:
		out.Reason = "dismissed"
		return out, nil
	case a.Decode(&answer) != nil || !answer.Approve:
		out.Reason = answer.Reason
		return out, nil
	}
	if err := progress(ctx, fmt.Sprintf("deploying %s to %s", in.Version, in.Env), in.StepSeconds); err != nil {
		return out, err
	}
	out.Deployed, out.Reason = true, answer.Reason
	return out, nil
}

// progress reports message and works for seconds.
func progress(ctx workflow.Context, message string, seconds float64) error {
	if err := taskgateflow.Progress(ctx, message); err != nil {
		return err
	}
	return sleepSeconds(ctx, seconds)
}

// ReleaseInput is the input of BuildRelease.
type ReleaseInput struct {
	Version     string  `json:"version"`
	StepSeconds float64 `json:"stepSeconds"`
}

// Release is what BuildRelease returns.
type Release struct {
	Version string `json:"version"`
	Status  string `json:"status"`
}

// releaseSteps are BuildRelease's steps.
var releaseSteps = []string{"compile", "test", "package"}

// BuildRelease builds a release in three steps (compile, test, package), each an activity of
// StepSeconds, and reports "step N of 3: STEP VERSION" as its progress.
func BuildRelease(ctx workflow.Context, in ReleaseInput) (Release, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Duration(in.StepSeconds*float64(time.Second)) + 30*time.Second,
		HeartbeatTimeout:    10 * time.Second,
	})
	for i, step := range releaseSteps {
		if err := taskgateflow.Progress(ctx, fmt.Sprintf("step %d of %d: %s %s", i+1, len(releaseSteps), step, in.Version)); err != nil {
			return Release{}, err
		}
		if err := workflow.ExecuteActivity(ctx, stepActivity, step, in.StepSeconds).Get(ctx, nil); err != nil {
			return Release{}, err
		}
	}
	return Release{Version: in.Version, Status: "released"}, nil
}

// RunStep works on one step of a release for seconds, heartbeating every half second.
func RunStep(ctx context.Context, step string, seconds float64) error {
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			activity.RecordHeartbeat(ctx, step)
		}
	}
	return nil
}
