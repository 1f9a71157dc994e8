package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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

// TestIAMPolicyOfOneIdentity: --identity prints one bare policy document, as aws iam
// put-role-policy --policy-document takes it: taskgate's own, or an assumed role's.
func TestIAMPolicyOfOneIdentity(t *testing.T) {
	const role = "arn:aws:iam::210987654321:role/pipelines"
	file := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(file, []byte(`engines:
  own:
    stepfunctions: {region: eu-west-1}
  other:
    stepfunctions: {region: eu-west-1, roleArn: `+role+`}
tools:
  - {name: a, description: A., engine: own, stateMachine: "arn:aws:states:eu-west-1:123456789012:stateMachine:a", inputSchema: {type: object}}
  - {name: b, description: B., engine: other, stateMachine: "arn:aws:states:eu-west-1:210987654321:stateMachine:b", inputSchema: {type: object}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	policy := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), append([]string{"iam-policy", "--config", file}, args...), nil, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, all, stderr := policy()
	var byIdentity map[string]json.RawMessage
	if err := json.Unmarshal([]byte(all), &byIdentity); code != 0 || err != nil || len(byIdentity) != 2 {
		t.Fatalf("every policy: exit %d, %v, stderr %q:\n%s", code, err, stderr, all)
	}
	for _, identity := range []string{"taskgate", role} {
		code, doc, stderr := policy("--identity", identity)
		var d struct{ Version string }
		if code != 0 || json.Unmarshal([]byte(doc), &d) != nil || d.Version != "2012-10-17" || !jsonEqual(doc, string(byIdentity[identity])) {
			t.Errorf("--identity %s: exit %d, stderr %q:\n%s", identity, code, stderr, doc)
		}
	}
	code, out, stderr := policy("--identity", "ci")
	const want = "taskgate: --identity ci: the mapping's engines need no policy for it; the identities are " + role + ", taskgate\n"
	if code != 2 || out != "" || stderr != want {
		t.Errorf("an unknown identity: exit %d, stdout %q, stderr %q, want 2 and %q", code, out, stderr, want)
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// TestIAMPolicyOfEvents: an engine block with events gets what its event source needs: its
// queues, sqs:ListQueues, and the subscription to its topic.
func TestIAMPolicyOfEvents(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(file, []byte(`engines:
  aws:
    stepfunctions:
      region: eu-west-1
      events: {topicArn: "arn:aws:sns:eu-west-1:123456789012:taskgate-sfn-events", queuePrefix: "orders-"}
tools:
  - {name: a, description: A., engine: aws, stateMachine: "arn:aws:states:eu-west-1:123456789012:stateMachine:a", inputSchema: {type: object}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"iam-policy", "--config", file, "--identity", "taskgate"}, nil, &stdout, &stderr)
	var doc struct {
		Statement []struct {
			Sid      string
			Action   []string
			Resource []string
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); code != 0 || err != nil {
		t.Fatalf("exit %d, %v, stderr %q:\n%s", code, err, stderr.String(), stdout.String())
	}
	want := map[string]string{
		"EventQueues":        "arn:aws:sqs:eu-west-1:123456789012:orders-*",
		"ListEventQueues":    "*",
		"EventSubscriptions": "arn:aws:sns:eu-west-1:123456789012:taskgate-sfn-events",
	}
	for _, s := range doc.Statement {
		if r, ok := want[s.Sid]; ok && len(s.Resource) == 1 && s.Resource[0] == r {
			delete(want, s.Sid)
		}
	}
	if len(want) > 0 {
		t.Errorf("the policy lacks %v:\n%s", want, stdout.String())
	}
}
