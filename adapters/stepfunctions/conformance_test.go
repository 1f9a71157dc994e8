package stepfunctions_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
)

func TestConformance(t *testing.T) {
	e := newEngine(t, nil)
	arns := createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho, sfnexamples.WaitAndFail, sfnexamples.Timeout,
		sfnexamples.AskAndEcho, sfnexamples.AskTwoAndEcho, sfnexamples.BuildRelease)
	// As taskgate does before it offers a tool; this also tells the engine each state machine's type.
	for _, arn := range arns {
		if _, err := e.Check(t.Context(), stateMachine(t, arn)); err != nil {
			t.Fatalf("Check(%s): %v", arn, err)
		}
	}
	enginetest.RunConformanceTests(t, func(t *testing.T) enginetest.Harness { return harness{t: t, engine: e, arns: arns} })
}

// harness shares one engine and one set of state machines among all subtests.
type harness struct {
	t      *testing.T
	engine driver.Conn
	arns   map[string]string
}

func (h harness) Conn() driver.Conn { return h.engine }

func (h harness) Driver() driver.Driver { return stepfunctions.Driver{} }

// Unreachable is an engine for a closed port, with credentials of its own: without any, the SDK
// fails before it tries the endpoint.
func (h harness) Unreachable() driver.Conn {
	e, err := stepfunctions.New(h.t.Context(), stepfunctions.Config{Region: "us-east-1", Endpoint: "http://127.0.0.1:1",
		Env: driver.Env{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test"}})
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

func (h harness) Target(name string) driver.Target {
	switch name {
	case "echo", "unpolled":
		return stateMachine(h.t, h.arns[sfnexamples.WaitAndEcho])
	case "fail":
		return stateMachine(h.t, h.arns[sfnexamples.WaitAndFail])
	case "timeout":
		return stateMachine(h.t, h.arns[sfnexamples.Timeout])
	case "absent":
		return stateMachine(h.t, strings.Replace(h.arns[sfnexamples.WaitAndEcho], ":stateMachine:", ":stateMachine:absent-", 1))
	case "wrongkind":
		// An activity ARN, which the driver never decodes into a target.
		return driver.Target{Name: strings.Replace(h.arns[sfnexamples.WaitAndEcho], ":stateMachine:", ":activity:", 1)}
	case "ask":
		return stateMachine(h.t, h.arns[sfnexamples.AskAndEcho])
	case "ask-two":
		return stateMachine(h.t, h.arns[sfnexamples.AskTwoAndEcho])
	case "steps":
		return stateMachine(h.t, h.arns[sfnexamples.BuildRelease])
	}
	return driver.Target{}
}

// executionARN turns a state machine ARN into the ARN of its execution called name.
func executionARN(machine, name string) string {
	return strings.Replace(machine, ":stateMachine:", ":execution:", 1) + ":" + name
}

func (h harness) Missing() driver.Ref {
	return driver.Ref{ID: executionARN(h.arns[sfnexamples.WaitAndEcho], driver.CallerTag("")+"-"+uuid.NewString())}
}

func (h harness) Foreign() []driver.Ref {
	echo := h.arns[sfnexamples.WaitAndEcho]
	name := echo[strings.LastIndex(echo, ":")+1:]
	id := uuid.NewString()
	return []driver.Ref{
		{ID: executionARN(h.arns[sfnexamples.WaitAndFail], id)},
		{ID: executionARN(strings.Replace(echo, ":123456789012:", ":210987654321:", 1), id)},
		{ID: executionARN(strings.Replace(echo, ":us-east-1:", ":eu-west-1:", 1), id)},
		{ID: executionARN(strings.Replace(echo, "arn:aws:", "arn:aws-cn:", 1), id)},
		{ID: "arn:aws:states:us-east-1:123456789012:express:" + name + ":" + id + ":" + uuid.NewString()},
		{ID: executionARN(echo+"x", id)},
		{ID: executionARN(echo, "a/b")},
		{ID: executionARN(echo, strings.Repeat("x", 81))},
		{ID: echo},
		{ID: "not-an-arn"},
	}
}

func (h harness) ShouldSkip(test string) (bool, string) {
	switch test {
	case "Submitted":
		return true, "Step Functions has no workers to wait for: an execution runs as soon as it starts, so it is never submitted"
	case "CancelAsking":
		return true, "the test endpoint (moto 5.2.1) answers StopExecution of an execution that waits for a task token but leaves it RUNNING; AWS aborts it"
	}
	return false, ""
}

func (h harness) Close() {}
