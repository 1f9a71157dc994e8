package stepfunctions_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/adapters/driver"
)

// TestSamples starts executions with different inputs, some by another caller than taskgate, and
// reads them back newest first, n of them, with one listing and one describe per input.
func TestSamples(t *testing.T) {
	ctx := testContext(t)
	c := &calls{}
	e := newEngine(t, c)
	arn := createMachine(t, sfnClient(t, e), "taskgate-samples-"+randomHex(4), passDefinition(t, ""), nil)
	tg := stateMachine(t, arn)
	if got, err := e.(driver.Sampler).Samples(ctx, tg, 3); err != nil || len(got) != 0 {
		t.Fatalf("Samples of a state machine that never ran: %s, %v; want none", got, err)
	}
	var want []string
	for i := range 4 {
		in := fmt.Sprintf(`{"order":%d,"sku":"A-%d"}`, i, i)
		if _, err := sfnClient(t, e).StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arn), Input: aws.String(in),
			Name: aws.String(fmt.Sprintf("someone-else-%d", i))}); err != nil {
			t.Fatal(err)
		}
		want = append([]string{in}, want...)
		waitNewer(t)
	}
	before := c.snapshot()
	got, err := e.(driver.Sampler).Samples(ctx, tg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if g := joinRaw(got); g != strings.Join(want[:3], " ") {
		t.Errorf("Samples(3) = %s\nwant %s", g, strings.Join(want[:3], " "))
	}
	if spent := c.since(before); spent["ListExecutions"] != 1 || spent["DescribeExecution"] != 3 || len(spent) != 2 {
		t.Errorf("Samples(3) made the calls %v, want one ListExecutions and 3 DescribeExecution", spent)
	}
	if all, err := e.(driver.Sampler).Samples(ctx, tg, 10); err != nil || joinRaw(all) != strings.Join(want, " ") {
		t.Errorf("Samples(10) = %s, %v; want the 4 inputs %s", joinRaw(all), err, strings.Join(want, " "))
	}
}

// TestSamplesOfNothing: a state machine that does not exist is named in the error. (The test
// endpoint, moto, keeps no Express state machine, whose samples are refused.)
func TestSamplesOfNothing(t *testing.T) {
	e := newEngine(t, nil)
	gone := "arn:aws:states:us-east-1:123456789012:stateMachine:taskgate-none-" + randomHex(4)
	if _, err := e.(driver.Sampler).Samples(testContext(t), stateMachine(t, gone), 5); err == nil || !strings.HasPrefix(err.Error(), "state machine "+gone+" not found: check the ARN") {
		t.Errorf("Samples of a state machine that does not exist: %v", err)
	}
}

func joinRaw[T ~[]byte](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, " ")
}

// waitNewer lets the clock move on, so that the next execution starts later than the last.
func waitNewer(t *testing.T) {
	t.Helper()
	time.Sleep(10 * time.Millisecond)
}
