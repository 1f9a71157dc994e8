package stepfunctions_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
)

// iamCase is one case of testdata/iam-policies.json, which test/deploycheck also runs against the
// taskgate-iam-policy Terraform module.
type iamCase struct {
	Name     string `json:"name"`
	Accesses []struct {
		RoleARN       string                      `json:"roleArn"`
		StateMachines []string                    `json:"stateMachines"`
		SyncExpress   []string                    `json:"syncExpress"`
		HumanInput    bool                        `json:"humanInput"`
		Events        *stepfunctions.EventsAccess `json:"events"`
	} `json:"accesses"`
	Caller json.RawMessage `json:"caller"`
	Roles  []struct {
		RoleARN string          `json:"roleArn"`
		Policy  json.RawMessage `json:"policy"`
	} `json:"roles"`
}

func (c iamCase) accesses() []stepfunctions.Access {
	var out []stepfunctions.Access
	for _, a := range c.Accesses {
		out = append(out, stepfunctions.Access{
			RoleARN: a.RoleARN, StateMachines: a.StateMachines, SyncExpress: a.SyncExpress, HumanInput: a.HumanInput,
			Events: a.Events,
		})
	}
	return out
}

func loadIAMCases(t *testing.T) []iamCase {
	t.Helper()
	b, err := os.ReadFile("testdata/iam-policies.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		About string    `json:"about"`
		Cases []iamCase `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("testdata/iam-policies.json: %v", err)
	}
	if len(file.Cases) == 0 {
		t.Fatal("testdata/iam-policies.json has no cases")
	}
	return file.Cases
}

// canonical re-indents a JSON document, so that documents compare by content and order (statement
// order and list order matter; object key order and white space do not).
func canonical(t *testing.T, what string, doc []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, doc)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}

func TestIAMPolicies(t *testing.T) {
	for _, tc := range loadIAMCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			p, err := stepfunctions.IAMPolicies(tc.accesses())
			if err != nil {
				t.Fatalf("IAMPolicies: %v", err)
			}
			if got, want := canonical(t, "got", p.Caller.JSON()), canonical(t, "want", tc.Caller); got != want {
				t.Errorf("caller policy:\n%s\nwant:\n%s", got, want)
			}
			if len(p.Roles) != len(tc.Roles) {
				t.Fatalf("%d role policies, want %d: %+v", len(p.Roles), len(tc.Roles), p.Roles)
			}
			for i, r := range p.Roles {
				if r.RoleARN != tc.Roles[i].RoleARN {
					t.Errorf("role %d is %s, want %s", i, r.RoleARN, tc.Roles[i].RoleARN)
				}
				if got, want := canonical(t, "got", r.Policy.JSON()), canonical(t, "want", tc.Roles[i].Policy); got != want {
					t.Errorf("policy of %s:\n%s\nwant:\n%s", r.RoleARN, got, want)
				}
			}
		})
	}
}

// The order of accesses and of ARNs does not change a byte of the output.
func TestIAMPoliciesDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range loadIAMCases(t) {
		accesses := tc.accesses()
		first, err := stepfunctions.IAMPolicies(accesses)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			shuffled := slices.Clone(accesses)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			for i := range shuffled {
				shuffled[i].StateMachines = slices.Clone(shuffled[i].StateMachines)
				rng.Shuffle(len(shuffled[i].StateMachines), func(a, b int) {
					shuffled[i].StateMachines[a], shuffled[i].StateMachines[b] = shuffled[i].StateMachines[b], shuffled[i].StateMachines[a]
				})
			}
			again, err := stepfunctions.IAMPolicies(shuffled)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Caller.JSON(), again.Caller.JSON()) {
				t.Fatalf("%s: caller policy depends on input order:\n%s\nvs\n%s", tc.Name, first.Caller.JSON(), again.Caller.JSON())
			}
			for i := range first.Roles {
				if !bytes.Equal(first.Roles[i].Policy.JSON(), again.Roles[i].Policy.JSON()) {
					t.Fatalf("%s: role policy depends on input order", tc.Name)
				}
			}
		}
	}
}

// JSON is indented with two spaces, keys in a fixed order, and ends with a newline.
func TestIAMPolicyJSONFormat(t *testing.T) {
	p, err := stepfunctions.IAMPolicies([]stepfunctions.Access{{
		SyncExpress: []string{"arn:aws:states:us-east-1:123456789012:stateMachine:quick"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Sid": "StartSyncExecution",
      "Effect": "Allow",
      "Action": [
        "states:StartSyncExecution"
      ],
      "Resource": [
        "arn:aws:states:us-east-1:123456789012:stateMachine:quick"
      ],
      "Condition": {
        "Null": {
          "states:StateMachineQualifier": [
            "true"
          ]
        }
      }
    },
    {
      "Sid": "DescribeStateMachine",
      "Effect": "Allow",
      "Action": [
        "states:DescribeStateMachine"
      ],
      "Resource": [
        "arn:aws:states:us-east-1:123456789012:stateMachine:quick"
      ],
      "Condition": {
        "Null": {
          "states:StateMachineQualifier": [
            "true"
          ]
        }
      }
    }
  ]
}
`
	if got := string(p.Caller.JSON()); got != want {
		t.Errorf("JSON:\n%s\nwant:\n%s", got, want)
	}
}

func TestIAMPoliciesErrors(t *testing.T) {
	tests := []struct {
		name     string
		accesses []stepfunctions.Access
		want     string
	}{
		{
			"not a state machine ARN",
			[]stepfunctions.Access{{StateMachines: []string{"arn:aws:states:us-east-1:123456789012:execution:orders:x"}}},
			`"arn:aws:states:us-east-1:123456789012:execution:orders:x" is not a Step Functions state machine ARN: want ` +
				`arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME, optionally followed by :VERSION or :ALIAS`,
		},
		{
			"unexpanded variable",
			[]stepfunctions.Access{{SyncExpress: []string{"arn:aws:states:${AWS_REGION}:123456789012:stateMachine:quick"}}},
			`"arn:aws:states:${AWS_REGION}:123456789012:stateMachine:quick" is not a Step Functions state machine ARN: want ` +
				`arn:PARTITION:states:REGION:ACCOUNT:stateMachine:NAME, optionally followed by :VERSION or :ALIAS`,
		},
		{
			"both Standard and Express",
			[]stepfunctions.Access{{
				StateMachines: []string{"arn:aws:states:us-east-1:123456789012:stateMachine:orders:live"},
				SyncExpress:   []string{"arn:aws:states:us-east-1:123456789012:stateMachine:orders"},
			}},
			"state machine arn:aws:states:us-east-1:123456789012:stateMachine:orders is listed both as a Standard state " +
				"machine and as a sync Express one: a state machine has one type; list all its targets under the one it has",
		},
		{
			"both, across accesses of one role",
			[]stepfunctions.Access{
				{RoleARN: "arn:aws:iam::123456789012:role/r", StateMachines: []string{"arn:aws:states:us-east-1:123456789012:stateMachine:orders"}},
				{RoleARN: "arn:aws:iam::123456789012:role/r", SyncExpress: []string{"arn:aws:states:us-east-1:123456789012:stateMachine:orders:2"}},
			},
			"state machine arn:aws:states:us-east-1:123456789012:stateMachine:orders is listed both as a Standard state " +
				"machine and as a sync Express one: a state machine has one type; list all its targets under the one it has",
		},
		{
			"user instead of role",
			[]stepfunctions.Access{{RoleARN: "arn:aws:iam::123456789012:user/alice"}},
			`"arn:aws:iam::123456789012:user/alice" is not an IAM role ARN: want arn:PARTITION:iam::ACCOUNT:role/NAME (the engine's roleArn)`,
		},
		{
			"events topic not a topic",
			[]stepfunctions.Access{{Events: &stepfunctions.EventsAccess{TopicARN: "arn:aws:sqs:us-east-1:123456789012:q"}}},
			`"arn:aws:sqs:us-east-1:123456789012:q" is not an SNS topic ARN: want arn:PARTITION:sns:REGION:ACCOUNT:NAME (the engine's events.topicArn)`,
		},
		{
			"events queue prefix",
			[]stepfunctions.Access{{Events: &stepfunctions.EventsAccess{TopicARN: "arn:aws:sns:us-east-1:123456789012:t", QueuePrefix: "a*"}}},
			`"a*" cannot start an SQS queue name: want at most 64 letters, digits, - and _ (the engine's events.queuePrefix)`,
		},
		{
			"role wildcard",
			[]stepfunctions.Access{{RoleARN: "arn:aws:iam::123456789012:role/*"}},
			`"arn:aws:iam::123456789012:role/*" is not an IAM role ARN: want arn:PARTITION:iam::ACCOUNT:role/NAME (the engine's roleArn)`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := stepfunctions.IAMPolicies(tc.accesses)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v\nwant    %s", err, tc.want)
			}
		})
	}
}

// A tool on the alias "live" of a state machine, served with taskgate's own credentials: the
// policy names the state machine and allows only that qualifier.
func ExampleIAMPolicies() {
	p, err := stepfunctions.IAMPolicies([]stepfunctions.Access{{
		StateMachines: []string{"arn:aws:states:eu-west-1:123456789012:stateMachine:orders:live"},
	}})
	if err != nil {
		panic(err)
	}
	for _, s := range p.Caller.Statement {
		fmt.Println(s.Sid, s.Action, s.Resource, s.Condition)
	}
	// Output:
	// StartExecutionQualified1 [states:StartExecution] [arn:aws:states:eu-west-1:123456789012:stateMachine:orders] map[ForAnyValue:StringEquals:map[states:StateMachineQualifier:[live]]]
	// DescribeStateMachine [states:DescribeStateMachine] [arn:aws:states:eu-west-1:123456789012:stateMachine:orders] map[Null:map[states:StateMachineQualifier:[true]]]
	// DescribeStateMachineAliasQualified1 [states:DescribeStateMachineAlias] [arn:aws:states:eu-west-1:123456789012:stateMachine:orders] map[ForAnyValue:StringEquals:map[states:StateMachineQualifier:[live]]]
	// ListExecutions [states:ListExecutions] [arn:aws:states:eu-west-1:123456789012:stateMachine:orders] map[Null:map[states:StateMachineQualifier:[true]]]
	// Executions [states:DescribeExecution states:GetExecutionHistory states:StopExecution] [arn:aws:states:eu-west-1:123456789012:execution:orders:*] map[]
}
