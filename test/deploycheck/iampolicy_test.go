package deploycheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
)

// policyInputs are the variables of terraform/modules/taskgate-iam-policy.
type policyInputs struct {
	StateMachineARNs            []string       `json:"state_machine_arns"`
	SyncExpressStateMachineARNs []string       `json:"sync_express_state_machine_arns"`
	HumanInput                  bool           `json:"human_input"`
	Events                      []eventSource  `json:"events"`
	CrossAccount                []crossAccount `json:"cross_account"`
}

type crossAccount struct {
	RoleARN                     string        `json:"role_arn"`
	StateMachineARNs            []string      `json:"state_machine_arns"`
	SyncExpressStateMachineARNs []string      `json:"sync_express_state_machine_arns"`
	HumanInput                  bool          `json:"human_input"`
	Events                      []eventSource `json:"events"`
}

// eventSource is an entry of the module's events: an engine block's events: block.
type eventSource struct {
	TopicARN    string `json:"topic_arn"`
	QueuePrefix string `json:"queue_prefix,omitempty"`
}

// eventsOf is an access's event source as the module's events list.
func eventsOf(a stepfunctions.Access) []eventSource {
	if a.Events == nil {
		return []eventSource{}
	}
	return []eventSource{{TopicARN: a.Events.TopicARN, QueuePrefix: a.Events.QueuePrefix}}
}

// inputsOf turns the Go function's accesses into the module's variables: the accesses with no role
// make the top-level variables, each other one a cross_account entry (several may name one role,
// which the module merges as the Go function does).
func inputsOf(accesses []stepfunctions.Access) policyInputs {
	in := policyInputs{StateMachineARNs: []string{}, SyncExpressStateMachineARNs: []string{}, Events: []eventSource{}, CrossAccount: []crossAccount{}}
	for _, a := range accesses {
		if a.RoleARN == "" {
			in.StateMachineARNs = append(in.StateMachineARNs, a.StateMachines...)
			in.SyncExpressStateMachineARNs = append(in.SyncExpressStateMachineARNs, a.SyncExpress...)
			in.HumanInput = in.HumanInput || a.HumanInput
			in.Events = append(in.Events, eventsOf(a)...)
			continue
		}
		in.CrossAccount = append(in.CrossAccount, crossAccount{
			RoleARN: a.RoleARN, StateMachineARNs: orEmpty(a.StateMachines),
			SyncExpressStateMachineARNs: orEmpty(a.SyncExpress), HumanInput: a.HumanInput, Events: eventsOf(a),
		})
	}
	return in
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// policyCase is a set of inputs and the policies the Go function makes of them.
type policyCase struct {
	name     string
	accesses []stepfunctions.Access
}

// goldenCases are the cases of adapters/stepfunctions/testdata/iam-policies.json, the table the
// Go function is tested against.
func goldenCases(t *testing.T) []policyCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "adapters/stepfunctions/testdata/iam-policies.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Name     string `json:"name"`
			Accesses []struct {
				RoleARN       string                      `json:"roleArn"`
				StateMachines []string                    `json:"stateMachines"`
				SyncExpress   []string                    `json:"syncExpress"`
				HumanInput    bool                        `json:"humanInput"`
				Events        *stepfunctions.EventsAccess `json:"events"`
			} `json:"accesses"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	var cases []policyCase
	for _, c := range file.Cases {
		pc := policyCase{name: c.Name}
		for _, a := range c.Accesses {
			pc.accesses = append(pc.accesses, stepfunctions.Access{
				RoleARN: a.RoleARN, StateMachines: a.StateMachines, SyncExpress: a.SyncExpress, HumanInput: a.HumanInput,
				Events: a.Events,
			})
		}
		cases = append(cases, pc)
	}
	if len(cases) == 0 {
		t.Fatal("no case in iam-policies.json")
	}
	return cases
}

// canonical re-indents a JSON document so that two documents compare by content and order.
func canonical(t *testing.T, what string, doc []byte) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, doc)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}

// policyModuleConfig writes a root configuration that calls the taskgate-iam-policy module once
// per input, with an output per call.
func policyModuleConfig(t *testing.T, inputs []policyInputs) string {
	t.Helper()
	dir := t.TempDir()
	src, err := filepath.Rel(dir, filepath.Join(repoRoot(t), "terraform/modules/taskgate-iam-policy"))
	if err != nil {
		t.Fatal(err)
	}
	modules := map[string]any{}
	outputs := map[string]any{}
	for i, in := range inputs {
		name := fmt.Sprintf("case_%d", i)
		call := map[string]any{"source": src}
		b, _ := json.Marshal(in)
		var vars map[string]any
		json.Unmarshal(b, &vars)
		for k, v := range vars {
			call[k] = v
		}
		modules[name] = call
		outputs[name] = map[string]any{"value": map[string]any{
			"policy":                      "${module." + name + ".policy}",
			"policy_json":                 "${module." + name + ".policy_json}",
			"statement_count":             "${module." + name + ".statement_count}",
			"has_statements":              "${module." + name + ".has_statements}",
			"assume_role_arns":            "${module." + name + ".assume_role_arns}",
			"cross_account_policies":      "${module." + name + ".cross_account_policies}",
			"cross_account_policies_json": "${module." + name + ".cross_account_policies_json}",
		}}
	}
	cfg, _ := json.MarshalIndent(map[string]any{"module": modules, "output": outputs}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "main.tf.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// moduleResult is one case's outputs from the module.
type moduleResult struct {
	Policy                   json.RawMessage            `json:"policy"`
	PolicyJSON               string                     `json:"policy_json"`
	StatementCount           int                        `json:"statement_count"`
	HasStatements            bool                       `json:"has_statements"`
	AssumeRoleARNs           []string                   `json:"assume_role_arns"`
	CrossAccountPolicies     map[string]json.RawMessage `json:"cross_account_policies"`
	CrossAccountPoliciesJSON map[string]string          `json:"cross_account_policies_json"`
}

// runPolicyModule applies the module to every input through OpenTofu and returns its outputs.
func runPolicyModule(t *testing.T, inputs []policyInputs) []moduleResult {
	t.Helper()
	dir := policyModuleConfig(t, inputs)
	out, err := tofuApply(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	var outputs map[string]struct {
		Value moduleResult `json:"value"`
	}
	if err := json.Unmarshal(out, &outputs); err != nil {
		t.Fatalf("tofu output -json: %v\n%s", err, out)
	}
	results := make([]moduleResult, len(inputs))
	for i := range inputs {
		o, ok := outputs[fmt.Sprintf("case_%d", i)]
		if !ok {
			t.Fatalf("no output case_%d in\n%s", i, out)
		}
		results[i] = o.Value
	}
	return results
}

// checkSamePolicies compares the module's outputs with the Go function's policies.
func checkSamePolicies(t *testing.T, name string, got moduleResult, want stepfunctions.Policies) {
	t.Helper()
	wantCaller := canonical(t, "Go", want.Caller.JSON())
	if c := canonical(t, "module policy", got.Policy); c != wantCaller {
		t.Errorf("%s: the module's policy differs from the Go function's:\n%s\nGo:\n%s", name, c, wantCaller)
	}
	if c := canonical(t, "module policy_json", []byte(got.PolicyJSON)); c != wantCaller {
		t.Errorf("%s: the module's policy_json differs from the Go function's:\n%s\nGo:\n%s", name, c, wantCaller)
	}
	if got.StatementCount != len(want.Caller.Statement) {
		t.Errorf("%s: statement_count %d, want %d", name, got.StatementCount, len(want.Caller.Statement))
	}
	if got.HasStatements != (len(want.Caller.Statement) > 0) {
		t.Errorf("%s: has_statements %v with %d statements", name, got.HasStatements, len(want.Caller.Statement))
	}
	var wantRoles []string
	for _, r := range want.Roles {
		wantRoles = append(wantRoles, r.RoleARN)
		wantPolicy := canonical(t, "Go", r.Policy.JSON())
		if c := canonical(t, "module", got.CrossAccountPolicies[r.RoleARN]); c != wantPolicy {
			t.Errorf("%s: the module's policy for %s differs from the Go function's:\n%s\nGo:\n%s", name, r.RoleARN, c, wantPolicy)
		}
		if c := canonical(t, "module", []byte(got.CrossAccountPoliciesJSON[r.RoleARN])); c != wantPolicy {
			t.Errorf("%s: the module's policy JSON for %s differs from the Go function's", name, r.RoleARN)
		}
	}
	if strings.Join(got.AssumeRoleARNs, " ") != strings.Join(wantRoles, " ") || len(got.CrossAccountPolicies) != len(want.Roles) {
		t.Errorf("%s: the module assumes %v with policies for %d roles, the Go function %v", name, got.AssumeRoleARNs,
			len(got.CrossAccountPolicies), wantRoles)
	}
}

// The Terraform module builds, for every case of the Go function's table, exactly the policies the
// Go function builds: same statements, order, Sids, actions, resources and conditions.
func TestIAMPolicyModuleMatchesGo(t *testing.T) {
	cases := goldenCases(t)
	var inputs []policyInputs
	for _, c := range cases {
		inputs = append(inputs, inputsOf(c.accesses))
	}
	results := runPolicyModule(t, inputs)
	for i, c := range cases {
		want, err := stepfunctions.IAMPolicies(c.accesses)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkSamePolicies(t, c.name, results[i], want)
	}
}

// The module refuses what the Go function refuses, before anything is applied.
func TestIAMPolicyModuleErrors(t *testing.T) {
	tests := []struct {
		name string
		in   policyInputs
		want string
	}{
		{
			"not a state machine ARN",
			policyInputs{StateMachineARNs: []string{"arn:aws:states:us-east-1:123456789012:execution:orders:x"}},
			"These are not Step Functions state machine ARNs: arn:aws:states:us-east-1:123456789012:execution:orders:x.",
		},
		{
			"name with a space",
			policyInputs{SyncExpressStateMachineARNs: []string{"arn:aws:states:us-east-1:123456789012:stateMachine:a b"}},
			"These are not Step Functions state machine ARNs: arn:aws:states:us-east-1:123456789012:stateMachine:a b.",
		},
		{
			"both types",
			policyInputs{
				StateMachineARNs:            []string{"arn:aws:states:us-east-1:123456789012:stateMachine:orders:live"},
				SyncExpressStateMachineARNs: []string{"arn:aws:states:us-east-1:123456789012:stateMachine:orders"},
			},
			"These state machines are listed both as Standard and as sync Express: arn:aws:states:us-east-1:123456789012:stateMachine:orders.",
		},
		{
			"user instead of role",
			policyInputs{CrossAccount: []crossAccount{{RoleARN: "arn:aws:iam::123456789012:user/alice"}}},
			"Each cross_account role_arn must be an IAM role ARN: arn:PARTITION:iam::ACCOUNT:role/NAME.",
		},
		{
			"events topic not a topic",
			policyInputs{Events: []eventSource{{TopicARN: "arn:aws:sqs:us-east-1:123456789012:q"}}},
			"These are not SNS topic ARNs: arn:aws:sqs:us-east-1:123456789012:q.",
		},
		{
			"events queue prefix",
			policyInputs{Events: []eventSource{{TopicARN: "arn:aws:sns:us-east-1:123456789012:t", QueuePrefix: "a*"}}},
			"These cannot start an SQS queue name: a*.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, in := range []*policyInputs{&tc.in} {
				in.StateMachineARNs = orEmpty(in.StateMachineARNs)
				in.SyncExpressStateMachineARNs = orEmpty(in.SyncExpressStateMachineARNs)
				if in.Events == nil {
					in.Events = []eventSource{}
				}
				if in.CrossAccount == nil {
					in.CrossAccount = []crossAccount{}
				}
				for i := range in.CrossAccount {
					in.CrossAccount[i].StateMachineARNs = orEmpty(in.CrossAccount[i].StateMachineARNs)
					in.CrossAccount[i].SyncExpressStateMachineARNs = orEmpty(in.CrossAccount[i].SyncExpressStateMachineARNs)
					if in.CrossAccount[i].Events == nil {
						in.CrossAccount[i].Events = []eventSource{}
					}
				}
			}
			_, err := tofuApply(t, policyModuleConfig(t, []policyInputs{tc.in}))
			if err == nil {
				t.Fatal("tofu apply succeeded")
			}
			// tofu wraps long messages: compare with white space collapsed.
			if got := strings.Join(strings.Fields(err.Error()), " "); !strings.Contains(got, tc.want) {
				t.Errorf("error does not say %q:\n%v", tc.want, err)
			}
		})
	}
}
