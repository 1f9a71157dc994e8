package main

import (
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestIAMPolicyOfTheExamples(t *testing.T) {
	cmd := exec.Command(binary, "iam-policy", "--config", "../../examples/stepfunctions/tools.yaml",
		"--express", "arn:aws:states:us-east-1:123456789012:stateMachine:taskgate-sfn-timeout")
	cmd.Env = append(serveEnv(), "SFN_ACCOUNT=123456789012")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got struct {
		Taskgate struct {
			Statement []struct {
				Sid       string
				Action    []string
				Resource  []string
				Condition map[string]any
			}
		}
		Roles map[string]any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	const m = "arn:aws:states:us-east-1:123456789012:stateMachine:taskgate-sfn-"
	const x = "arn:aws:states:us-east-1:123456789012:execution:taskgate-sfn-"
	standard := []string{m + "approve-deployment", m + "build-release", m + "order-pipeline", m + "wait-and-echo", m + "wait-and-fail"}
	want := map[string][2][]string{
		"StartExecution":       {{"states:StartExecution"}, standard},
		"StartSyncExecution":   {{"states:StartSyncExecution"}, {m + "timeout"}},
		"DescribeStateMachine": {{"states:DescribeStateMachine"}, {standard[0], standard[1], standard[2], m + "timeout", standard[3], standard[4]}},
		"ListExecutions":       {{"states:ListExecutions"}, standard},
		"Executions":           {{"states:DescribeExecution", "states:GetExecutionHistory", "states:StopExecution"}, {x + "approve-deployment:*", x + "build-release:*", x + "order-pipeline:*", x + "wait-and-echo:*", x + "wait-and-fail:*"}},
	}
	seen := map[string]bool{}
	for _, s := range got.Taskgate.Statement {
		w, ok := want[s.Sid]
		if !ok || !reflect.DeepEqual(s.Action, w[0]) || !reflect.DeepEqual(s.Resource, w[1]) {
			t.Errorf("statement %s: %v on %v, want %v", s.Sid, s.Action, s.Resource, w)
		}
		seen[s.Sid] = true
	}
	if len(seen) != len(want) || len(got.Roles) != 0 {
		t.Fatalf("statements %v, roles %v; want %v and no role", seen, got.Roles, want)
	}
	if strings.Contains(string(out), "SendTask") {
		t.Fatal("human input permissions without --human-input")
	}
	human := exec.Command(binary, "iam-policy", "--config", "../../examples/stepfunctions/tools.yaml", "--human-input")
	human.Env = cmd.Env
	if out, err := human.Output(); err != nil || !strings.Contains(string(out), `"Sid": "HumanInput"`) ||
		!strings.Contains(string(out), `"states:SendTaskFailure",`) || !strings.Contains(string(out), `"states:SendTaskSuccess"`) {
		t.Fatalf("--human-input: %v: %s", err, out)
	}

	temporal := exec.Command(binary, "iam-policy", "--config", "../../examples/temporal/tools.yaml")
	if out, err := temporal.CombinedOutput(); processExit(err) != 1 || !strings.Contains(string(out), "no engine of this mapping has a cloud policy to print") {
		t.Fatalf("a Temporal mapping: %v: %s", err, out)
	}
}
