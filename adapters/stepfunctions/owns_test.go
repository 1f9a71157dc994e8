package stepfunctions_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
)

func TestOwns(t *testing.T) {
	// Owns makes no API call: the engine points at a closed port.
	e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Region: "us-east-1", Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	const (
		machine = "arn:aws:states:us-east-1:123456789012:stateMachine:orders"
		exec    = "arn:aws:states:us-east-1:123456789012:execution:orders:"
	)
	targets := []string{machine, machine + ":PROD", machine + ":7"}
	tag := driver.CallerTag("alice") + "-"
	tests := []struct {
		name string
		ref  driver.Ref
		want bool
	}{
		{"uuid name", driver.Ref{ID: exec + tag + "0b6f3c9e-7d1a-4f55-9a51-2c3f0c6f1e2d"}, true},
		{"key name", driver.Ref{ID: exec + tag + "k-0123456789abcdef0123456789abcdef01234567"}, true},
		{"planted: the tag and another name", driver.Ref{ID: exec + tag + "planted"}, false},
		{"upper-case uuid", driver.Ref{ID: exec + tag + "0B6F3C9E-7D1A-4F55-9A51-2C3F0C6F1E2D"}, false},
		{"short key", driver.Ref{ID: exec + tag + "k-0123456789abcdef0123456789abcdef0123456"}, false},
		{"upper-case key", driver.Ref{ID: exec + tag + "k-0123456789ABCDEF0123456789abcdef01234567"}, false},
		{"key name with more", driver.Ref{ID: exec + tag + "k-0123456789abcdef0123456789abcdef01234567x"}, false},
		{"80 characters", driver.Ref{ID: exec + tag + strings.Repeat("é", 63)}, false},
		{"another caller's", driver.Ref{ID: exec + driver.CallerTag("bob") + "-0b6f3c9e-7d1a-4f55-9a51-2c3f0c6f1e2d"}, false},
		{"no caller tag", driver.Ref{ID: exec + "0b6f3c9e-7d1a-4f55-9a51-2c3f0c6f1e2d"}, false},
		{"other state machine", driver.Ref{ID: "arn:aws:states:us-east-1:123456789012:execution:orders2:x"}, false},
		{"name prefix", driver.Ref{ID: "arn:aws:states:us-east-1:123456789012:execution:order:x"}, false},
		{"other account", driver.Ref{ID: "arn:aws:states:us-east-1:210987654321:execution:orders:x"}, false},
		{"other region", driver.Ref{ID: "arn:aws:states:eu-west-1:123456789012:execution:orders:x"}, false},
		{"other partition", driver.Ref{ID: "arn:aws-cn:states:us-east-1:123456789012:execution:orders:x"}, false},
		{"other service", driver.Ref{ID: "arn:aws:lambda:us-east-1:123456789012:execution:orders:x"}, false},
		{"express", driver.Ref{ID: "arn:aws:states:us-east-1:123456789012:express:orders:x:y"}, false},
		{"map run", driver.Ref{ID: "arn:aws:states:us-east-1:123456789012:mapRun:orders/m:x"}, false},
		{"state machine", driver.Ref{ID: machine}, false},
		{"alias", driver.Ref{ID: machine + ":PROD"}, false},
		{"no name", driver.Ref{ID: strings.TrimSuffix(exec, ":")}, false},
		{"empty name", driver.Ref{ID: exec}, false},
		{"extra part", driver.Ref{ID: exec + "x:y"}, false},
		{"81 characters", driver.Ref{ID: exec + strings.Repeat("a", 81)}, false},
		{"space", driver.Ref{ID: exec + "a b"}, false},
		{"slash", driver.Ref{ID: exec + "a/b"}, false},
		{"control character", driver.Ref{ID: exec + "a\x07b"}, false},
		{"C1 control character", driver.Ref{ID: exec + "a\u0085b"}, false},
		{"invalid UTF-8", driver.Ref{ID: exec + "a\xffb"}, false},
		{"case differs", driver.Ref{ID: "arn:aws:states:us-east-1:123456789012:Execution:orders:x"}, false},
		{"empty", driver.Ref{}, false},
		{"garbage", driver.Ref{ID: "orders"}, false},
	}
	for _, target := range targets {
		for _, tc := range tests {
			if got := e.Owns(stateMachine(t, target), tc.ref, "alice"); got != tc.want {
				t.Errorf("%s: Owns(%s, %q) = %v, want %v", tc.name, target, tc.ref, got, tc.want)
			}
		}
	}

	if e.Owns(driver.Target{Name: machine}, driver.Ref{ID: exec + tag + "x"}, "alice") {
		t.Errorf("Owns(...) = true for a target that the driver did not decode")
	}
}

// TestAPlantedExecutionIsNoOnesTask: an execution someone else started on the engine, named after
// bob's tag, is neither bob's to read nor listed as his; his own, started and keyed, are.
func TestAPlantedExecutionIsNoOnesTask(t *testing.T) {
	ctx := testContext(t)
	e := newEngine(t, nil)
	machine := createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho)[sfnexamples.WaitAndEcho]
	echo := stateMachine(t, machine)
	input := `{"seconds":60,"text":"x"}`
	planted, err := sfnClient(t, e).StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine),
		Name: aws.String(driver.CallerTag("bob") + "-planted"), Input: aws.String(input)})
	if err != nil {
		t.Fatalf("StartExecution: %v", err)
	}
	own, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(input), Caller: "bob"})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	keyed, err := e.Start(ctx, echo, driver.StartRequest{Input: json.RawMessage(input), Caller: "bob", Key: "k1"})
	if err != nil {
		t.Fatalf("Start with a key: %v", err)
	}
	plantedRef := driver.Ref{ID: aws.ToString(planted.ExecutionArn)}
	if e.Owns(echo, plantedRef, "bob") {
		t.Errorf("Owns(%s, bob) = true for an execution bob did not start through taskgate", plantedRef)
	}
	listed, _, err := e.List(ctx, driver.ListOptions{Target: echo, Caller: "bob", Limit: 100})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var refs []driver.Ref
	for _, l := range listed {
		refs = append(refs, l.Ref)
	}
	if slices.Contains(refs, plantedRef) || !slices.Contains(refs, own) || !slices.Contains(refs, keyed) {
		t.Errorf("List for bob = %v; want his two executions %v and %v, and not the planted %v", refs, own, keyed, plantedRef)
	}
	for _, r := range []driver.Ref{own, keyed, plantedRef} {
		_ = e.Cancel(ctx, echo, r, "test over")
	}
}
