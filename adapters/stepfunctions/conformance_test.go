package stepfunctions_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/enginetest"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
)

func TestConformance(t *testing.T) {
	e := newEngine(t, nil)
	arns := createExamples(t, e.Client(), sfnexamples.WaitAndEcho, sfnexamples.WaitAndFail, sfnexamples.Timeout)
	// As taskgate does before it offers a tool; this also tells the engine each state machine's type.
	for _, arn := range arns {
		if _, err := e.Check(t.Context(), adapters.Target{Name: arn}); err != nil {
			t.Fatalf("Check(%s): %v", arn, err)
		}
	}
	h := harness{engine: e, arns: arns}
	enginetest.RunConformanceTests(t, func(*testing.T) enginetest.Harness { return h })
}

// harness shares one engine and one set of state machines among all subtests.
type harness struct {
	engine *stepfunctions.Engine
	arns   map[string]string
}

func (h harness) Engine() adapters.Engine { return h.engine }

func (h harness) Target(name string) adapters.Target {
	switch name {
	case "echo", "unpolled":
		return adapters.Target{Name: h.arns[sfnexamples.WaitAndEcho]}
	case "fail":
		return adapters.Target{Name: h.arns[sfnexamples.WaitAndFail]}
	case "timeout":
		return adapters.Target{Name: h.arns[sfnexamples.Timeout]}
	}
	return adapters.Target{}
}

// executionARN turns a state machine ARN into the ARN of its execution called name.
func executionARN(machine, name string) string {
	return strings.Replace(machine, ":stateMachine:", ":execution:", 1) + ":" + name
}

func (h harness) Missing() adapters.Ref {
	return adapters.Ref{ID: executionARN(h.arns[sfnexamples.WaitAndEcho], uuid.NewString())}
}

func (h harness) Foreign() []adapters.Ref {
	echo := h.arns[sfnexamples.WaitAndEcho]
	name := echo[strings.LastIndex(echo, ":")+1:]
	id := uuid.NewString()
	return []adapters.Ref{
		{ID: executionARN(h.arns[sfnexamples.WaitAndFail], id)},
		{ID: executionARN(strings.Replace(echo, ":123456789012:", ":210987654321:", 1), id)},
		{ID: executionARN(strings.Replace(echo, ":us-east-1:", ":eu-west-1:", 1), id)},
		{ID: executionARN(strings.Replace(echo, "arn:aws:", "arn:aws-cn:", 1), id)},
		{ID: "arn:aws:states:us-east-1:123456789012:express:" + name + ":" + id + ":" + uuid.NewString()},
		{ID: executionARN(echo+"x", id)},
		{ID: executionARN(echo, id), Run: id},
		{ID: executionARN(echo, "a/b")},
		{ID: executionARN(echo, strings.Repeat("x", 81))},
		{ID: echo},
		{ID: "not-an-arn"},
	}
}

func (h harness) ShouldSkip(test string) (bool, string) {
	if test == "Submitted" {
		return true, "Step Functions has no workers to wait for: an execution runs as soon as it starts, so it is never submitted"
	}
	return false, ""
}

func (h harness) Close() {}
