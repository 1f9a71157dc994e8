package security

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
)

// inferredRuns is how many executions the discover probe starts: more than the 10 samples the
// enum rule needs.
const inferredRuns = 12

// TestProbesDiscover: `taskgate discover --infer` drafts a mapping from the inputs of recent
// executions; a secret that every run carries must not come out in the draft, where every caller
// would read it in tools/list and have to send it.
func TestProbesDiscover(t *testing.T) {
	endpoint := testenv.SFNEndpoint(t)
	bin := binary(t)
	r := &results{}
	defer func() { t.Logf("taskgate %s:\n%s", bin, r.table()) }()
	prefix := "probe-secrets-" + uuid.NewString()[:8] + "-"
	secrets := map[string]string{
		"apiToken":   "tgk_live_" + strings.ReplaceAll(uuid.NewString(), "-", ""),
		"dbPassword": "hunter2-" + uuid.NewString()[:4], // short and plain: only its name gives it away
	}
	runWithSecrets(t, endpoint, prefix+"nightly-sync", secrets)

	draft, warnings := discoverDraft(t, bin, endpoint, prefix)
	r.add(t, "discover secrets", fmt.Sprintf("discover stepfunctions --infer %d over %d runs that all carry the same apiToken and dbPassword", inferredRuns, inferredRuns),
		"no sampled secret in the draft or its warnings", leakedIn(draft+warnings, secrets), leakedIn(draft+warnings, secrets) == "none")

	if !discoverHas(bin, "enums") {
		return
	}
	draft, warnings = discoverDraft(t, bin, endpoint, prefix, "--enums")
	r.add(t, "discover secrets", "the same with --enums", "region's values as an enum; no sampled secret in the draft or its warnings",
		fmt.Sprintf("region's enum %s; secrets leaked: %s", map[bool]string{true: "drafted", false: "missing"}[strings.Contains(draft, `"enum":["eu-west-1","us-east-1"]`)], leakedIn(draft+warnings, secrets)),
		strings.Contains(draft, `"enum":["eu-west-1","us-east-1"]`) && leakedIn(draft+warnings, secrets) == "none")
}

// runWithSecrets creates a state machine and starts inferredRuns executions of it, each with the
// secrets and a region, one of two.
func runWithSecrets(t *testing.T, endpoint, name string, secrets map[string]string) {
	t.Helper()
	e, err := stepfunctions.New(t.Context(), stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sc := testenv.As[*sfn.Client](t, e)
	def := `{"Comment": "Syncs the nightly data.", "StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}`
	machine, err := sc.CreateStateMachine(t.Context(), &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(def),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/taskgate-probe")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range inferredRuns {
		input := map[string]string{"region": []string{"eu-west-1", "us-east-1"}[i%2]}
		for k, v := range secrets {
			input[k] = v
		}
		b, _ := json.Marshal(input)
		if _, err := sc.StartExecution(t.Context(), &sfn.StartExecutionInput{StateMachineArn: machine.StateMachineArn,
			Name: aws.String(fmt.Sprint("run-", i)), Input: aws.String(string(b))}); err != nil {
			t.Fatal(err)
		}
	}
}

// discoverDraft runs `taskgate discover stepfunctions --infer` over the state machines named with
// prefix, and returns the draft and the warnings.
func discoverDraft(t *testing.T, bin, endpoint, prefix string, flags ...string) (draft, warnings string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"discover", "stepfunctions", "--endpoint", endpoint, "--region", "us-east-1",
		"--prefix", prefix, "--infer", fmt.Sprint(inferredRuns)}, flags...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("taskgate discover stepfunctions %v: %v\n%s", flags, err, &stderr)
	}
	if !strings.Contains(stdout.String(), `"apiToken":{`) {
		t.Fatalf("the draft inferred no input schema from the runs:\n%s\n%s", &stdout, &stderr)
	}
	return stdout.String(), stderr.String()
}

// leakedIn names the fields whose sampled secret text holds, "none" when it holds none.
func leakedIn(text string, secrets map[string]string) string {
	var found []string
	for field, value := range secrets {
		if strings.Contains(text, value) {
			found = append(found, field+"'s value")
		}
	}
	if len(found) == 0 {
		return "none"
	}
	slices.Sort(found)
	return strings.Join(found, ", ")
}

// discoverHas reports whether the build's `discover stepfunctions` has a flag (an older build lacks
// the newer ones).
func discoverHas(bin, flag string) bool {
	out, _ := exec.Command(bin, "discover", "stepfunctions", "--help").CombinedOutput()
	return bytes.Contains(out, []byte("--"+flag+" "))
}
