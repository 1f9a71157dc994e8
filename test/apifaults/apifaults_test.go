package apifaults_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/restate"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	"github.com/taskgate/taskgate/adapters/temporal"
	restateexamples "github.com/taskgate/taskgate/examples/restate"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/test/apifaults"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// sfnThroughProxy is a Step Functions engine that reaches the endpoint through a proxy, and the
// wait-and-echo state machine.
func sfnThroughProxy(t *testing.T) (*apifaults.StepFunctions, adapters.Conn, adapters.Target) {
	t.Helper()
	p, err := apifaults.NewStepFunctions(testenv.SFNEndpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Endpoint: p.URL()})
	if err != nil {
		t.Fatal(err)
	}
	out, err := testenv.As[*sfn.Client](t, e).CreateStateMachine(testContext(t), &sfn.CreateStateMachineInput{
		Name:       aws.String("apifaults-" + uuid.NewString()[:8]),
		Definition: aws.String(sfnexamples.Definitions()[sfnexamples.WaitAndEcho]),
		RoleArn:    aws.String("arn:aws:iam::123456789012:role/taskgate-test"),
	})
	if err != nil {
		t.Fatal(err)
	}
	sm, err := stepfunctions.StateMachine(aws.ToString(out.StateMachineArn))
	if err != nil {
		t.Fatal(err)
	}
	return p, e, sm
}

// The proxy throttles exactly the fraction asked of the operations named, as Step Functions does
// (the SDK reads its answer as ThrottlingException), and passes everything else.
func TestStepFunctionsThrottle(t *testing.T) {
	ctx := testContext(t)
	p, e, sm := sfnThroughProxy(t)
	r, err := e.Start(ctx, sm, adapters.StartRequest{Input: json.RawMessage(`{"seconds":600,"text":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	p.Throttle(0.2, "DescribeExecution")
	throttled := 0
	for range 10 {
		_, err := e.Describe(ctx, sm, r)
		switch {
		case errors.Is(err, adapters.ErrThrottled):
			throttled++
		case err != nil:
			t.Fatalf("Describe through the proxy: %v", err)
		}
	}
	if throttled != 2 || p.Throttled("DescribeExecution") != 2 || p.Calls("DescribeExecution") != 10 {
		t.Errorf("10 Describes at 20%%: %d throttled (proxy: %d of %d calls), want 2 of 10",
			throttled, p.Throttled("DescribeExecution"), p.Calls("DescribeExecution"))
	}
	if err := e.Cancel(ctx, sm, r, "done"); err != nil {
		t.Errorf("Cancel, an operation the proxy does not throttle: %v", err)
	}
}

// A quota refuses the calls past its bucket with ThrottlingException, as Step Functions does (the
// SDK reads it as a throttle), and counts them apart from Throttle's.
func TestStepFunctionsLimit(t *testing.T) {
	ctx := testContext(t)
	p, e, _ := sfnThroughProxy(t)
	p.Limit(0.001, 2, "ListExecutions")
	limited := 0
	for range 4 {
		_, err := testenv.As[*sfn.Client](t, e).ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:none")},
			func(o *sfn.Options) { o.RetryMaxAttempts = 1 }) // each call once: the proxy's count is the test's
		var apiErr interface{ ErrorCode() string }
		if errors.As(err, &apiErr) && apiErr.ErrorCode() == "ThrottlingException" {
			limited++
		}
	}
	if limited != 2 || p.Limited("ListExecutions") != 2 || p.Throttled("ListExecutions") != 0 || p.Calls("ListExecutions") != 4 {
		t.Errorf("4 listings on a bucket of 2: %d refused (proxy: %d limited, %d throttled, of %d calls), want 2 limited of 4",
			limited, p.Limited("ListExecutions"), p.Throttled("ListExecutions"), p.Calls("ListExecutions"))
	}
}

// Executions the proxy saw start are not found by reads until they are old enough.
func TestStepFunctionsHide(t *testing.T) {
	ctx := testContext(t)
	p, e, sm := sfnThroughProxy(t)
	p.HideFor(time.Second)
	r, err := e.Start(ctx, sm, adapters.StartRequest{Input: json.RawMessage(`{"seconds":600,"text":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Describe(ctx, sm, r); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("Describe right after the start: %v, want ErrNotFound", err)
	}
	time.Sleep(time.Second)
	if st, err := e.Describe(ctx, sm, r); err != nil || st.State != adapters.Working {
		t.Errorf("Describe a second after the start: %v %v, want working", st.State, err)
	}
	if err := e.Cancel(ctx, sm, r, "done"); err != nil {
		t.Error(err)
	}
}

// The gRPC proxy passes calls to the Temporal frontend through, and throttles the fraction asked
// with ResourceExhausted as the frontend does (the adapter reads it as ErrThrottled).
func TestTemporalThrottle(t *testing.T) {
	ctx := testContext(t)
	p, err := apifaults.NewTemporal(testenv.TemporalAddress(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e, err := temporal.New(ctx, temporal.Config{Address: p.Address()})
	if err != nil {
		t.Fatalf("dialing Temporal through the proxy: %v", err)
	}
	defer e.Close()
	wf := temporal.Workflow(temporalexamples.WaitAndEchoName, "apifaults-unpolled-"+uuid.NewString(), 0)
	r, err := e.Start(ctx, wf, adapters.StartRequest{Input: json.RawMessage(`{"seconds":600,"text":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Cancel(context.WithoutCancel(ctx), wf, r, "done")
	p.Throttle(0.5, "DescribeWorkflowExecution")
	throttled := 0
	for range 4 {
		st, err := e.Describe(ctx, wf, r)
		switch {
		case errors.Is(err, adapters.ErrThrottled):
			throttled++
		case err != nil:
			t.Fatalf("Describe through the proxy: %v", err)
		case st.State != adapters.Submitted:
			t.Errorf("Describe: %v, want submitted (no worker polls the queue)", st.State)
		}
	}
	if throttled != 2 || p.Calls("DescribeWorkflowExecution") != 4 {
		t.Errorf("4 Describes at 50%%: %d throttled of %d calls, want 2 of 4", throttled, p.Calls("DescribeWorkflowExecution"))
	}
}

// The Restate proxy counts each read of an invocation as one call of the SQL endpoint, apart
// from the admin API's other calls, and passes them all through.
func TestRestateAdminCounts(t *testing.T) {
	ctx := testContext(t)
	p, err := apifaults.NewRestateAdmin(testenv.RestateAdmin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	e, err := restate.New(restate.Config{Ingress: testenv.RestateIngress(t), Admin: p.URL()})
	if err != nil {
		t.Fatal(err)
	}
	echo := restate.Handler(restateexamples.WaitAndEcho, restateexamples.RunHandler, restate.Kill)
	r, err := e.Start(ctx, echo, adapters.StartRequest{Input: json.RawMessage(`{"seconds":600,"text":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if st, err := e.Describe(ctx, echo, r); err != nil || st.State.Terminal() {
			t.Fatalf("Describe through the proxy: %v %v, want a running invocation", st.State, err)
		}
	}
	if err := e.Cancel(ctx, echo, r, "done"); err != nil {
		t.Fatalf("Cancel through the proxy: %v", err)
	}
	// The Cancel reads the invocation first; the service's metadata is read once, by the first call.
	want := map[string]int64{apifaults.RestateQuery: 4, "GET /services": 1, "PATCH /invocations": 1}
	if got := p.AllCalls(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls through the proxy: %v, want %v", got, want)
	}
}
