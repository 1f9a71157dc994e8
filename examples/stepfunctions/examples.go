// Package sfnexamples holds example Step Functions state machines for taskgate, in Amazon States
// Language, and creates them in an account. Each definition's Comment carries its MCP input schema
// after "taskgate:inputSchema", which the Step Functions adapter's Discover reads.
package sfnexamples

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// The example state machines, by name.
const (
	// WaitAndEcho takes {"seconds": n, "text": s}, waits n seconds and answers {"text": s}.
	WaitAndEcho = "taskgate-sfn-wait-and-echo"
	// WaitAndFail takes {"seconds": n, "reason": s}, waits n seconds and fails with error
	// "Example.Failure" and cause s.
	WaitAndFail = "taskgate-sfn-wait-and-fail"
	// Timeout takes {"seconds": n} and waits n seconds, but the execution times out after 2 seconds.
	Timeout = "taskgate-sfn-timeout"
	// OrderPipeline takes {"orderId": s, "items": [{"sku": s, "qty": n}, ...]}: it checks the order
	// (Choice), reserves every item (inline Map) while preparing the payment and a notice
	// (Parallel), and answers with a summary, or with status "rejected" when an item's quantity is
	// not positive (Catch). An order without orderId or items fails with "Order.Invalid".
	OrderPipeline = "taskgate-sfn-order-pipeline"
	// AskAndEcho takes {"message": s} and asks one question (key "confirm", message s, an answer
	// {"confirm": boolean}); it answers with the accepted answer, and fails with the error of a
	// declined or dismissed question ("taskgate.Declined", "taskgate.Dismissed").
	AskAndEcho = "taskgate-sfn-ask-and-echo"
	// AskTwoAndEcho asks two questions at once (keys "first" and "second", each like AskAndEcho's)
	// and answers {"first": answer, "second": answer}.
	AskTwoAndEcho = "taskgate-sfn-ask-two-and-echo"
	// ApproveDeployment takes {"version": s, "env": s, "stepSeconds": n}: it prepares for n
	// seconds, asks "Deploy VERSION to ENV?" (key "approve", an answer {"approve": boolean,
	// "reason"?: string}), and deploys for n seconds when approved. It answers {"version", "env",
	// "deployed", and "approval" (the answer) or "reason" ("declined", "dismissed")}.
	ApproveDeployment = "taskgate-sfn-approve-deployment"
	// BuildRelease takes {"version": s, "stepSeconds": n}: it compiles, runs three test suites one
	// after the other (an inline Map) and packages, each step n seconds, and answers
	// {"version": s, "status": "released"}.
	BuildRelease = "taskgate-sfn-build-release"
)

//go:embed *.asl.json
var files embed.FS

const fileSuffix = ".asl.json"

// definitions are the embedded files by state machine name, read once.
var definitions = func() map[string]string {
	entries, err := files.ReadDir(".")
	if err != nil {
		panic(err) // an embedded directory always reads
	}
	defs := make(map[string]string, len(entries))
	for _, entry := range entries {
		b, err := files.ReadFile(entry.Name())
		if err != nil {
			panic(err)
		}
		defs[strings.TrimSuffix(entry.Name(), fileSuffix)] = string(b)
	}
	return defs
}()

// Definitions returns the definition of every example state machine, by name.
func Definitions() map[string]string { return maps.Clone(definitions) }

// Ensure creates every example state machine (Standard type) that does not exist yet, and updates
// in place those whose definition or role differ, so it can run any number of times. roleARN is
// the IAM role the executions run as: the examples that ask a question send it as an event to
// the default EventBridge bus (events:PutEvents), and call nothing else. It returns each state
// machine's ARN by name.
func Ensure(ctx context.Context, c *sfn.Client, roleARN string) (map[string]string, error) {
	defs := Definitions()
	arns := make(map[string]string, len(defs))
	pages := sfn.NewListStateMachinesPaginator(c, &sfn.ListStateMachinesInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing state machines: %w", err)
		}
		for _, sm := range page.StateMachines {
			if _, ok := defs[aws.ToString(sm.Name)]; ok {
				arns[aws.ToString(sm.Name)] = aws.ToString(sm.StateMachineArn)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		def := defs[name]
		arn, ok := arns[name]
		if !ok {
			out, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
				Name:       aws.String(name),
				Definition: aws.String(def),
				RoleArn:    aws.String(roleARN),
				Type:       types.StateMachineTypeStandard,
			})
			if err != nil {
				return nil, fmt.Errorf("creating state machine %s: %w", name, err)
			}
			arns[name] = aws.ToString(out.StateMachineArn)
			continue
		}
		cur, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
		if err != nil {
			return nil, fmt.Errorf("reading state machine %s: %w", arn, err)
		}
		if sameJSON(aws.ToString(cur.Definition), def) && aws.ToString(cur.RoleArn) == roleARN {
			continue
		}
		if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{
			StateMachineArn: aws.String(arn),
			Definition:      aws.String(def),
			RoleArn:         aws.String(roleARN),
		}); err != nil {
			return nil, fmt.Errorf("updating state machine %s: %w", arn, err)
		}
	}
	return arns, nil
}

// sameJSON compares definitions as JSON values, so that reformatting alone causes no update.
func sameJSON(a, b string) bool {
	var va, vb any
	return json.Unmarshal([]byte(a), &va) == nil && json.Unmarshal([]byte(b), &vb) == nil && reflect.DeepEqual(va, vb)
}
