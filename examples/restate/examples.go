// Package restateexamples is a Restate service deployment with taskgate's example tools (the same
// as the Temporal and Step Functions examples), what taskgate's conformance suite runs, and the
// fixture tools of the official MCP conformance suite (conformance.go): bind
// Definitions to a Restate server handler, serve it over HTTP/2, and register it with the
// Restate server (Serve does all three). tools.yaml (Mapping) serves them as MCP tools.
//
// Plain services (WaitAndEcho, WaitAndFail) run one handler per task; the handlers that ask
// questions or report progress are workflows, whose state taskgate reads (package
// taskgatehandler). Each handler is the one named RunHandler.
package restateexamples

import (
	"encoding/json"
	"fmt"
	"time"

	restate "github.com/restatedev/sdk-go"

	"github.com/taskgate/taskgate/adapters/restate/taskgatehandler"
)

// The services, each with one handler, RunHandler.
const (
	WaitAndEcho       = "WaitAndEcho"
	WaitAndFail       = "WaitAndFail"
	AskAndEcho        = "AskAndEcho"
	AskTwoAndEcho     = "AskTwoAndEcho"
	ApproveDeployment = "ApproveDeployment"
	BuildRelease      = "BuildRelease"
	RunHandler        = "run"
)

// Definitions returns the example services, and those of the conformance suite's fixture tools.
func Definitions() []restate.ServiceDefinition {
	return append(conformanceDefinitions(),
		restate.NewService(WaitAndEcho, restate.WithDocumentation("Waits the given number of seconds, then returns the text.")).
			Handler(RunHandler, restate.NewServiceHandler(waitAndEcho)),
		restate.NewService(WaitAndFail, restate.WithDocumentation("Waits the given number of seconds, then fails with the given reason.")).
			Handler(RunHandler, restate.NewServiceHandler(waitAndFail)),
		restate.NewWorkflow(AskAndEcho, restate.WithDocumentation("Asks one question and returns the answer.")).
			Handler(RunHandler, restate.NewWorkflowHandler(askAndEcho)),
		restate.NewWorkflow(AskTwoAndEcho, restate.WithDocumentation("Asks two questions at once and returns both answers.")).
			Handler(RunHandler, restate.NewWorkflowHandler(askTwoAndEcho)),
		restate.NewWorkflow(ApproveDeployment, restate.WithDocumentation("Prepares a deployment, asks whether to deploy it, and deploys only when approved.")).
			Handler(RunHandler, restate.NewWorkflowHandler(approveDeployment)),
		restate.NewWorkflow(BuildRelease, restate.WithDocumentation("Compiles, tests and packages a version, saying which step runs.")).
			Handler(RunHandler, restate.NewWorkflowHandler(buildRelease)),
	)
}

// EchoInput is the input of WaitAndEcho.
type EchoInput struct {
	Seconds float64 `json:"seconds" jsonschema:"minimum=0,maximum=86400,description=How long to wait."`
	Text    string  `json:"text" jsonschema:"description=The text to return."`
}

// EchoOutput is what WaitAndEcho returns.
type EchoOutput struct {
	Text string `json:"text"`
}

func waitAndEcho(ctx restate.Context, in EchoInput) (EchoOutput, error) {
	if err := sleepSeconds(ctx, in.Seconds); err != nil {
		return EchoOutput{}, err
	}
	return EchoOutput{Text: in.Text}, nil
}

// FailInput is the input of WaitAndFail.
type FailInput struct {
	Seconds float64 `json:"seconds" jsonschema:"minimum=0,maximum=86400,description=How long to wait."`
	Reason  string  `json:"reason" jsonschema:"description=The failure message."`
}

// FailureName is the name of WaitAndFail's failure.
const FailureName = "Example.Failure"

func waitAndFail(ctx restate.Context, in FailInput) (restate.Void, error) {
	if err := sleepSeconds(ctx, in.Seconds); err != nil {
		return restate.Void{}, err
	}
	return restate.Void{}, taskgatehandler.Fail(FailureName, in.Reason)
}

// ConfirmSchema is the schema of the answers AskAndEcho and AskTwoAndEcho wait for.
var ConfirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)

// AskInput is the input of AskAndEcho.
type AskInput struct {
	Message string `json:"message" jsonschema:"description=The question to ask."`
}

// askAndEcho asks one question, key "confirm", and returns the accepted answer's content; a
// declined or dismissed question fails it as taskgatehandler.Answer.Refusal says.
func askAndEcho(ctx restate.WorkflowContext, in AskInput) (json.RawMessage, error) {
	a, err := taskgatehandler.Ask(ctx, "confirm", in.Message, ConfirmSchema)
	if err != nil {
		return nil, err
	}
	if err := a.Refusal("confirm"); err != nil {
		return nil, err
	}
	return a.Content, nil
}

// askTwoAndEcho asks "first" and "second" at once and returns both accepted answers.
func askTwoAndEcho(ctx restate.WorkflowContext, _ struct{}) (map[string]json.RawMessage, error) {
	var open []*taskgatehandler.Asking
	keys := []string{"first", "second"}
	for _, key := range keys {
		q, err := taskgatehandler.Open(ctx, key, key+" question: confirm?", ConfirmSchema)
		if err != nil {
			return nil, err
		}
		open = append(open, q)
	}
	answers, err := taskgatehandler.Await(ctx, open...)
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	for _, key := range keys {
		if err := answers[key].Refusal(key); err != nil {
			return nil, err
		}
		out[key] = answers[key].Content
	}
	return out, nil
}

// DeploymentInput is the input of ApproveDeployment.
type DeploymentInput struct {
	Version string `json:"version" jsonschema:"minLength=1,description=The version to deploy."`
	Env     string `json:"env" jsonschema:"enum=dev,enum=staging,enum=prod,description=Where to deploy it."`
	// StepSeconds is how long preparing and deploying take each.
	StepSeconds float64 `json:"stepSeconds,omitempty" jsonschema:"minimum=0,maximum=60,description=How long preparing and deploying take each."`
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

// approveDeployment prepares a deployment, asks "Deploy VERSION to ENV?" (key "approve",
// ApprovalSchema), and deploys when approved. Not approved, declined or dismissed, it ends
// without deploying: a decision, not a failure.
func approveDeployment(ctx restate.WorkflowContext, in DeploymentInput) (Deployment, error) {
	out := Deployment{Version: in.Version, Env: in.Env}
	if err := step(ctx, fmt.Sprintf("preparing %s for %s", in.Version, in.Env), in.StepSeconds); err != nil {
		return out, err
	}
	taskgatehandler.Progress(ctx, "")
	a, err := taskgatehandler.Ask(ctx, "approve", fmt.Sprintf("Deploy %s to %s?", in.Version, in.Env), ApprovalSchema)
	if err != nil {
		return out, err
	}
	var answer struct {
		Approve bool   `json:"approve"`
		Reason  string `json:"reason"`
	}
	switch {
	case a.Action == taskgatehandler.Decline:
		out.Reason = "declined"
		return out, nil
	case a.Action == taskgatehandler.Cancel:
		out.Reason = "dismissed"
		return out, nil
	case a.Decode(&answer) != nil || !answer.Approve:
		out.Reason = answer.Reason
		return out, nil
	}
	if err := step(ctx, fmt.Sprintf("deploying %s to %s", in.Version, in.Env), in.StepSeconds); err != nil {
		return out, err
	}
	out.Deployed, out.Reason = true, answer.Reason
	return out, nil
}

// ReleaseInput is the input of BuildRelease.
type ReleaseInput struct {
	Version     string  `json:"version" jsonschema:"minLength=1,description=The version to build."`
	StepSeconds float64 `json:"stepSeconds,omitempty" jsonschema:"minimum=0,maximum=600,description=How long each step takes."`
}

// Release is what BuildRelease returns.
type Release struct {
	Version string `json:"version"`
	Status  string `json:"status"`
}

// releaseSteps are BuildRelease's steps.
var releaseSteps = []string{"compile", "test", "package"}

// buildRelease builds a release in three steps (compile, test, package) of StepSeconds each, and
// reports "step N of 3: STEP VERSION" as its progress.
func buildRelease(ctx restate.WorkflowContext, in ReleaseInput) (Release, error) {
	for i, name := range releaseSteps {
		if err := step(ctx, fmt.Sprintf("step %d of %d: %s %s", i+1, len(releaseSteps), name, in.Version), in.StepSeconds); err != nil {
			return Release{}, err
		}
	}
	taskgatehandler.Progress(ctx, "")
	return Release{Version: in.Version, Status: "released"}, nil
}

// step reports message as progress and works for seconds.
func step(ctx restate.WorkflowContext, message string, seconds float64) error {
	taskgatehandler.Progress(ctx, message)
	return sleepSeconds(ctx, seconds)
}

// sleepSeconds sleeps durably; a cancellation ends it with Restate's terminal error.
func sleepSeconds(ctx restate.Context, seconds float64) error {
	if err := restate.Sleep(ctx, time.Duration(seconds*float64(time.Second))); err != nil {
		return err
	}
	return nil
}
