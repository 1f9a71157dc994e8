package security

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
)

// TestProbesLimits runs the probes of issue 29, items 4 (an answer too large for the engine) and 5
// (an output that is not JSON), against the build.
func TestProbesLimits(t *testing.T) {
	testenv.TemporalAddress(t)
	endpoint := testenv.SFNEndpoint(t)
	bin := binary(t)
	r := &results{}
	defer func() { t.Logf("taskgate %s:\n%s", bin, strings.Replace(r.table(), "issue 16", "issue 29", 1)) }()
	machine := askMachine(t, endpoint)
	d := startDev(t, bin, limitsMapping(t, endpoint, aws.ToString(machine)))
	oversizedAnswer(t, r, d)
	outputNotJSON(t, r, d, endpoint, machine)
}

// limitsMapping maps the Temporal example that asks for an approval and a reason, and the Step
// Functions example that asks and echoes the answer.
func limitsMapping(t *testing.T, endpoint, askARN string) string {
	t.Helper()
	dir := t.TempDir()
	src := fmt.Sprintf(`engines:
  local-temporal:
    temporal: {}
  aws:
    stepfunctions: {region: us-east-1, endpoint: %q}
auth:
  apiKeys:
    - {principal: alice, keyEnv: PROBE_KEY_ALICE}
tools:
  - name: approve_deployment
    description: Asks whether to deploy, with a reason.
    engine: local-temporal
    workflow: {type: ApproveDeployment, taskQueue: taskgate-examples}
    inputSchema: {type: object, properties: {version: {type: string}, env: {type: string}}, required: [version, env]}
    input: '{version, env, stepSeconds: 0}'
  - name: ask_and_echo
    description: Asks, then echoes the answer.
    engine: aws
    stateMachine: %s
    inputSchema: {type: object, properties: {message: {type: string}}, required: [message]}
`, endpoint, askARN)
	if err := os.WriteFile(filepath.Join(dir, "tools.yaml"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// askMachine creates the Step Functions example that asks one question and echoes its answer.
func askMachine(t *testing.T, endpoint string) *string {
	t.Helper()
	e, err := stepfunctions.New(context.Background(), stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out, err := testenv.As[*sfn.Client](t, e).CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String("taskgate-probe-ask-" + uuid.NewString()[:8]),
		Definition: aws.String(sfnexamples.Definitions()[sfnexamples.AskAndEcho]), RoleArn: aws.String("arn:aws:iam::123456789012:role/taskgate-examples")})
	if err != nil {
		t.Fatal(err)
	}
	return out.StateMachineArn
}

// within posts body, waiting at most 20 s for the answer: what it saw, and the answer when one came.
func within(d *dev, body string, headers ...string) (string, *answer) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	a, err := post(ctx, d.url, aliceKey, body, headers...)
	if err != nil {
		return fmt.Sprintf("no answer within 20 s (%v)", err), nil
	}
	return fmt.Sprintf("after %.1f s: %s", time.Since(start).Seconds(), a), &a
}

// oversizedAnswer: a 3 MiB reason (the question's schema sets no maxLength) is refused at once,
// saying the limit, and the workflow can still be answered.
func oversizedAnswer(t *testing.T, r *results, d *dev) {
	id := modernTask(t, d, aliceKey, "approve_deployment", map[string]any{"version": "v1", "env": "dev"})
	defer func() {
		meta, h := modern("tasks/cancel", id)
		must(t, d.url, aliceKey, rpc("tasks/cancel", map[string]any{"taskId": id, "_meta": meta}), h...)
	}()
	update := func(content map[string]any) (string, *answer) {
		meta, h := modern("tasks/update", id)
		return within(d, rpc("tasks/update", map[string]any{"taskId": id, "_meta": meta,
			"inputResponses": map[string]any{"approve": map[string]any{"action": "accept", "content": content}}}), h...)
	}
	seen, a := update(map[string]any{"approve": true, "reason": strings.Repeat("x", 3<<20)})
	refused := a != nil && a.code() == -32602 && strings.Contains(a.msg.Error.Message, "this tool's engine takes answers of at most 1.9 MiB")
	if refused {
		_, limit, _ := strings.Cut(a.msg.Error.Message, "invalid request: ")
		seen += " … " + limit
	}
	r.add(t, "4 answer size", "tasks/update answering approve_deployment with a 3 MiB reason",
		"-32602 at once, naming Temporal's limit", seen, refused && !strings.Contains(seen, "no answer"))

	seen, a = update(map[string]any{"approve": true, "reason": "ship it"})
	status := awaitTask(t, d, aliceKey, id, "completed")
	r.add(t, "4 answer size", "then a normal answer to the same task", "delivered, and the task completes",
		fmt.Sprintf("%s; the task %s", seen, status), a != nil && a.served() && status == "completed")
}

// outputNotJSON: an execution whose output is not JSON (moto takes NaN from SendTaskSuccess, as
// Step Functions would not) is answered with a failure, not a request that hangs.
func outputNotJSON(t *testing.T, r *results, d *dev, endpoint string, machine *string) {
	id := modernTask(t, d, aliceKey, "ask_and_echo", map[string]any{"message": "Ship it?"})
	e, err := stepfunctions.New(context.Background(), stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sc := testenv.As[*sfn.Client](t, e)
	token, err := openTaskToken(sc, machine)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.SendTaskSuccess(context.Background(), &sfn.SendTaskSuccessInput{TaskToken: token, Output: aws.String(`{"confirm":NaN}`)}); err != nil {
		t.Fatal(err)
	}
	status := awaitTask(t, d, aliceKey, id, "completed")
	seen, a := within(d, rpc("tasks/result", map[string]any{"taskId": id}))
	var res struct {
		IsError bool
		Content []struct{ Text string }
	}
	if a != nil {
		json.Unmarshal(a.msg.Result, &res)
	}
	said := len(res.Content) == 1 && strings.Contains(res.Content[0].Text, "taskgate.InvalidOutput")
	if said {
		seen += ": " + res.Content[0].Text
	}
	r.add(t, "5 output", "tasks/result of a Step Functions execution whose output is {\"confirm\":NaN}",
		"answered at once: an error result that says the output is not JSON", fmt.Sprintf("task %s; %s", status, seen), a != nil && res.IsError && said)
}

// openTaskToken is the token of the task that the one running execution of machine waits on.
func openTaskToken(c *sfn.Client, machine *string) (*string, error) {
	running, err := c.ListExecutions(context.Background(), &sfn.ListExecutionsInput{StateMachineArn: machine, StatusFilter: "RUNNING"})
	if err != nil {
		return nil, err
	}
	for _, x := range running.Executions {
		h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn, ReverseOrder: true})
		if err != nil {
			return nil, err
		}
		for _, ev := range h.Events {
			if ev.TaskScheduledEventDetails == nil {
				continue
			}
			var p struct {
				Entries []struct{ Detail struct{ TaskToken string } }
			}
			if json.Unmarshal([]byte(aws.ToString(ev.TaskScheduledEventDetails.Parameters)), &p) == nil && len(p.Entries) == 1 {
				return aws.String(p.Entries[0].Detail.TaskToken), nil
			}
		}
	}
	return nil, fmt.Errorf("no execution of %s waits on a task", aws.ToString(machine))
}
