package sfnexamples_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/pace"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
)

const role = "arn:aws:iam::123456789012:role/taskgate-examples"

// calls counts Step Functions API calls by operation.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) Do(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "AWSStepFunctions.")]++
	c.mu.Unlock()
	return http.DefaultClient.Do(req)
}

func (c *calls) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = nil
	return n
}

// setup returns a Conn, its Step Functions client, the calls it makes, and the examples' ARNs.
func setup(t *testing.T) (adapters.Conn, *sfn.Client, *calls, map[string]string) {
	t.Helper()
	c := &calls{}
	e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Endpoint: testenv.SFNEndpoint(t), HTTPClient: c})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var sc *sfn.Client
	if !driver.As(e, &sc) {
		t.Fatal("As(**sfn.Client) = false")
	}
	arns, err := sfnexamples.Ensure(t.Context(), sc, role)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	c.reset()
	return e, sc, c, arns
}

func TestEnsure(t *testing.T) {
	ctx := t.Context()
	_, sc, c, arns := setup(t)
	defs := sfnexamples.Definitions()
	for _, name := range []string{sfnexamples.WaitAndEcho, sfnexamples.WaitAndFail, sfnexamples.Timeout, sfnexamples.OrderPipeline} {
		if _, ok := defs[name]; !ok {
			t.Errorf("Definitions() has no %s", name)
		}
	}
	if len(arns) != len(defs) {
		t.Errorf("Ensure returned %d ARNs, want %d", len(arns), len(defs))
	}
	for name, arn := range arns {
		if !strings.HasSuffix(arn, ":stateMachine:"+name) {
			t.Errorf("Ensure: %s has ARN %s", name, arn)
		}
	}

	again, err := sfnexamples.Ensure(ctx, sc, role)
	if err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	if !reflect.DeepEqual(again, arns) {
		t.Errorf("second Ensure returned %v, want %v", again, arns)
	}
	if n := c.reset(); n["CreateStateMachine"]+n["UpdateStateMachine"] != 0 {
		t.Errorf("second Ensure made calls %v, want no create or update", n)
	}

	echo := arns[sfnexamples.WaitAndEcho]
	if _, err := sc.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{
		StateMachineArn: aws.String(echo),
		Definition:      aws.String(`{"StartAt":"Done","States":{"Done":{"Type":"Pass","End":true}}}`),
	}); err != nil {
		t.Fatalf("changing %s: %v", echo, err)
	}
	c.reset()
	if _, err := sfnexamples.Ensure(ctx, sc, role); err != nil {
		t.Fatalf("Ensure after a change: %v", err)
	}
	if n := c.reset(); n["UpdateStateMachine"] != 1 || n["CreateStateMachine"] != 0 {
		t.Errorf("Ensure after one definition changed made calls %v, want exactly one update", n)
	}
	d, err := sc.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(echo)})
	if err != nil || aws.ToString(d.Definition) != defs[sfnexamples.WaitAndEcho] {
		t.Errorf("after Ensure, %s has definition %s (%v), want the embedded one", echo, aws.ToString(d.Definition), err)
	}
}

func TestExamples(t *testing.T) {
	e, _, _, arns := setup(t)
	engine := adapters.NewEngine(e, adapters.EngineOptions{}) // runs a Standard execution as a start and a wait
	order := map[string]any{"orderId": "o-1", "items": []any{
		map[string]any{"sku": "tea", "qty": 2}, map[string]any{"sku": "cup", "qty": 1},
	}}
	tests := []struct {
		name, machine string
		input         any
		want          adapters.Outcome
	}{
		{
			"echo", sfnexamples.WaitAndEcho, map[string]any{"seconds": 1, "text": "hello"},
			adapters.Outcome{State: adapters.Succeeded, Native: "SUCCEEDED", Output: json.RawMessage(`{"text":"hello"}`)},
		},
		{
			"fail", sfnexamples.WaitAndFail, map[string]any{"seconds": 0, "reason": "out of stock"},
			adapters.Outcome{State: adapters.Failed, Native: "FAILED", Error: "Example.Failure", Cause: "out of stock"},
		},
		{
			"timeout", sfnexamples.Timeout, map[string]any{"seconds": 10},
			adapters.Outcome{State: adapters.Failed, Native: "TIMED_OUT", Error: "States.Timeout"},
		},
		{
			"order accepted", sfnexamples.OrderPipeline, order,
			adapters.Outcome{State: adapters.Succeeded, Native: "SUCCEEDED", Output: json.RawMessage(`{
				"orderId": "o-1", "status": "accepted",
				"reserved": [{"sku": "tea", "qty": 2, "reserved": true}, {"sku": "cup", "qty": 1, "reserved": true}],
				"payment": {"orderId": "o-1", "lines": 2, "status": "authorised"},
				"notice": {"message": "Order o-1 received"}}`)},
		},
		{
			"order rejected", sfnexamples.OrderPipeline,
			map[string]any{"orderId": "o-2", "items": []any{map[string]any{"sku": "tea", "qty": 0}}},
			adapters.Outcome{State: adapters.Succeeded, Native: "SUCCEEDED", Output: json.RawMessage(`{
				"orderId": "o-2", "status": "rejected", "error": "Order.BadQuantity",
				"reason": "every item needs a quantity above 0"}`)},
		},
		{
			"order invalid", sfnexamples.OrderPipeline, map[string]any{"items": []any{}},
			adapters.Outcome{State: adapters.Failed, Native: "FAILED", Error: "Order.Invalid",
				Cause: "an order needs a string orderId and at least one item"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			in, err := json.Marshal(tc.input)
			if err != nil {
				t.Fatal(err)
			}
			machine, err := stepfunctions.StateMachine(arns[tc.machine])
			if err != nil {
				t.Fatal(err)
			}
			_, got, err := engine.Run(ctx, machine, adapters.StartRequest{Input: in}, pace.Pace{})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !sameOutcome(got, tc.want) {
				t.Errorf("Run: %+v (output %s)\nwant %+v (output %s)", got, got.Output, tc.want, tc.want.Output)
			}
		})
	}
}

// sameOutcome compares outcomes with their outputs as JSON values, and without their Status.
func sameOutcome(a, b adapters.Outcome) bool {
	a.Status, b.Status = adapters.Status{}, adapters.Status{}
	var oa, ob any
	if a.Output != nil || b.Output != nil {
		if json.Unmarshal(a.Output, &oa) != nil || json.Unmarshal(b.Output, &ob) != nil {
			return false
		}
	}
	a.Output, b.Output = nil, nil
	return reflect.DeepEqual(a, b) && reflect.DeepEqual(oa, ob)
}

func TestInputSchemas(t *testing.T) {
	_, sc, _, arns := setup(t)
	found, err := stepfunctions.Discover(t.Context(), sc, "taskgate-sfn-", nil)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	byARN := map[string]stepfunctions.Discovered{}
	for _, d := range found {
		byARN[d.ARN] = d
	}
	for name, arn := range arns {
		d, ok := byARN[arn]
		if !ok {
			t.Errorf("Discover did not find %s", name)
			continue
		}
		var schema struct {
			Type       string
			Properties map[string]any
			Required   []string
		}
		if err := json.Unmarshal(d.InputSchema, &schema); err != nil || schema.Type != "object" || len(schema.Required) == 0 && len(schema.Properties) > 0 {
			t.Errorf("%s: input schema %s (%v), want an object schema with required properties, or none", name, d.InputSchema, err)
		}
		if d.Description == "" || strings.Contains(d.Description, "taskgate:") {
			t.Errorf("%s: description %q, want the Comment's text without the schema", name, d.Description)
		}
	}
}
