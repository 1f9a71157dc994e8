package stepfunctions_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
)

// TestMappingErrors: what the driver says about engine blocks and state machine targets.
func TestMappingErrors(t *testing.T) {
	const tools = `
tools:
  - name: a
    description: d
    engine: a
    inputSchema: {type: object}
`
	for _, c := range []struct{ name, src, want string }{
		{"bad region", `engines:
  a:
    stepfunctions: {region: useast1}
`, `m.yaml:3:29: engines.a.stepfunctions.region: "useast1" is not an AWS region (the AWS region of the state machines, like us-east-1; or leave it out for AWS_REGION)`},
		{"bad endpoint", `engines:
  a:
    stepfunctions: {region: us-east-1, endpoint: "127.0.0.1:8083"}
`, `m.yaml:3:50: engines.a.stepfunctions.endpoint: "127.0.0.1:8083" is not an http:// or https:// URL (like http://127.0.0.1:8083; leave it out to use AWS)`},
		{"bad role ARN", `engines:
  a:
    stepfunctions: {region: us-east-1, roleArn: "arn:aws:iam::123:user/x"}
`, `m.yaml:3:49: engines.a.stepfunctions.roleArn: "arn:aws:iam::123:user/x" is not an IAM role ARN (like arn:aws:iam::123456789012:role/NAME)`},
		{"events not a mapping", `engines:
  a:
    stepfunctions: {region: us-east-1, events: "arn:aws:sns:us-east-1:123456789012:t"}
`, `m.yaml:3:48: engines.a.stepfunctions.events: must be a mapping, not a string (write events: {topicArn: arn:aws:sns:REGION:ACCOUNT:NAME}, the SNS topic the EventBridge rule publishes status changes to)`},
		{"events without topic", `engines:
  a:
    stepfunctions: {region: us-east-1, events: {queuePrefix: tg-}}
`, `m.yaml:3:48: engines.a.stepfunctions.events: missing required key "topicArn" (the SNS topic the EventBridge rule of Step Functions' status changes publishes to, like arn:aws:sns:us-east-1:123456789012:taskgate-sfn-events)`},
		{"events topic not a topic", `engines:
  a:
    stepfunctions: {region: us-east-1, events: {topicArn: "arn:aws:sqs:us-east-1:123456789012:q"}}
`, `m.yaml:3:59: engines.a.stepfunctions.events.topicArn: "arn:aws:sqs:us-east-1:123456789012:q" is not an SNS topic ARN (like arn:aws:sns:us-east-1:123456789012:taskgate-sfn-events)`},
		{"events topic in another region", `engines:
  a:
    stepfunctions: {region: us-east-1, events: {topicArn: "arn:aws:sns:eu-west-1:123456789012:t"}}
`, `m.yaml:3:59: engines.a.stepfunctions.events.topicArn: the topic is in region eu-west-1, not in the engine's region us-east-1 (Step Functions sends its events to the EventBridge of its own region, whose rules publish to topics of that region)`},
		{"events queue prefix with a dot", `engines:
  a:
    stepfunctions: {region: us-east-1, events: {topicArn: "arn:aws:sns:us-east-1:123456789012:t", queuePrefix: "a.b"}}
`, `m.yaml:3:112: engines.a.stepfunctions.events.queuePrefix: "a.b" cannot start an SQS queue name (at most 64 letters, digits, - and _: a random suffix of 16 follows, and SQS names have 80 at most; or leave it out for taskgate-)`},
		{"events queue prefix too long", `engines:
  a:
    stepfunctions: {region: us-east-1, events: {topicArn: "arn:aws:sns:us-east-1:123456789012:t", queuePrefix: "` + strings.Repeat("q", 65) + `"}}
`, `m.yaml:3:112: engines.a.stepfunctions.events.queuePrefix: "` + strings.Repeat("q", 65) + `" cannot start an SQS queue name (at most 64 letters, digits, - and _: a random suffix of 16 follows, and SQS names have 80 at most; or leave it out for taskgate-)`},
		{"events endpoint not a URL", `engines:
  a:
    stepfunctions: {region: us-east-1, events: {topicArn: "arn:aws:sns:us-east-1:123456789012:t", endpoint: "127.0.0.1:5000"}}
`, `m.yaml:3:109: engines.a.stepfunctions.events.endpoint: "127.0.0.1:5000" is not an http:// or https:// URL (the SNS and SQS endpoint, like http://127.0.0.1:5000; leave it out for the block's endpoint, or AWS's)`},
		{"events unknown key", `engines:
  a:
    stepfunctions: {region: us-east-1, events: {topicArn: "arn:aws:sns:us-east-1:123456789012:t", qeuePrefix: x}}
`, `m.yaml:3:99: engines.a.stepfunctions.events: unknown key "qeuePrefix" (did you mean "queuePrefix"?)`},
		{"state machine missing", `engines: {a: {stepfunctions: {}}}` + tools,
			`m.yaml:3:5: tools[0]: missing required key "stateMachine": engine "a" is Step Functions (add stateMachine: arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)`},
		{"bad state machine ARN", `engines: {a: {stepfunctions: {}}}` + tools + `    stateMachine: arn:aws:states:us-east-1:123456789012:execution:a:b
`, `m.yaml:7:19: tools[0].stateMachine: "arn:aws:states:us-east-1:123456789012:execution:a:b" is not a state machine ARN (like arn:aws:states:us-east-1:123456789012:stateMachine:NAME, or with :ALIAS or :VERSION after it)`},
		{"empty state machine", `engines: {a: {stepfunctions: {}}}` + tools + `    stateMachine: ""
`, `m.yaml:7:19: tools[0].stateMachine: is empty (like arn:aws:states:us-east-1:123456789012:stateMachine:NAME, or with :ALIAS or :VERSION after it)`},
		{"long form without arn", `engines: {a: {stepfunctions: {}}}` + tools + `    stateMachine: {history: false}
`, `m.yaml:7:19: tools[0].stateMachine: missing required key "arn" (like arn:aws:states:us-east-1:123456789012:stateMachine:NAME, or with :ALIAS or :VERSION after it)`},
		{"long form, bad arn", `engines: {a: {stepfunctions: {}}}` + tools + `    stateMachine: {arn: "arn:aws:states:us-east-1:123456789012:activity:a"}
`, `m.yaml:7:25: tools[0].stateMachine.arn: "arn:aws:states:us-east-1:123456789012:activity:a" is not a state machine ARN (like arn:aws:states:us-east-1:123456789012:stateMachine:NAME, or with :ALIAS or :VERSION after it)`},
		{"long form, history not a bool", `engines: {a: {stepfunctions: {}}}` + tools + `    stateMachine: {arn: "arn:aws:states:us-east-1:123456789012:stateMachine:a", history: sometimes}
`, `m.yaml:7:90: tools[0].stateMachine.history: must be true or false, not a string`},
		{"long form, unknown key", `engines: {a: {stepfunctions: {}}}` + tools + `    stateMachine: {arn: "arn:aws:states:us-east-1:123456789012:stateMachine:a", histroy: false}
`, `m.yaml:7:81: tools[0].stateMachine: unknown key "histroy" (did you mean "history"?)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := mapping.Parse("m.yaml", []byte(c.src))
			if err == nil || err.Error() != c.want {
				t.Errorf("got:\n%v\nwant:\n%s", err, c.want)
			}
		})
	}
}

// TestValueForms checks which forms of engine settings and state machine ARNs are accepted.
func TestValueForms(t *testing.T) {
	for _, c := range []struct {
		file string
		ok   bool
	}{
		{`engines: {a: {stepfunctions: {}}}`, true},
		{`engines: {a: {stepfunctions: {region: us-gov-west-1, roleArn: "arn:aws-us-gov:iam::123456789012:role/path/to/r"}}}`, true},
		{`engines: {a: {stepfunctions: {region: cn-north-1, endpoint: "https://states.cn-north-1.amazonaws.com.cn"}}}`, true},
		{`engines: {a: {stepfunctions: {region: us-east-1, endpoint: "ftp://x"}}}`, false},
		{`engines: {a: {stepfunctions: {region: eu-west-1, events: {topicArn: "arn:aws:sns:eu-west-1:210987654321:taskgate-sfn-events", queuePrefix: "taskgate-", endpoint: "http://127.0.0.1:5000"}}}}`, true},
		{`engines: {a: {stepfunctions: {events: {topicArn: "arn:aws-cn:sns:cn-north-1:210987654321:events.fifo"}}}}`, true},
		{`engines: {a: {stepfunctions: {events: {topicArn: "${TOPIC:-arn:aws:sns:us-east-1:210987654321:t}", queuePrefix: ""}}}}`, true},
	} {
		_, err := mapping.Parse("v.yaml", []byte(c.file))
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok=%v", c.file, err, c.ok)
		}
	}
	for _, c := range []struct {
		arn string
		ok  bool
	}{
		{"arn:aws:states:us-east-1:123456789012:stateMachine:orders", true},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:orders:prod", true},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:orders:12", true},
		{"arn:aws-cn:states:cn-north-1:123456789012:stateMachine:orders_v2-x", true},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:" + strings.Repeat("é", 80), true},
		{"arn:aws:states:us-east-1:123456789012:execution:orders:run-1", false},
		{"arn:aws:states:us-east-1:1234:stateMachine:orders", false},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:orders:", false},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:a:b:c", false},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:a b", false},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:" + strings.Repeat("a", 81), false},
		{"orders", false},
	} {
		file := `engines: {s: {stepfunctions: {}}}
tools: [{name: a, description: d, engine: s, inputSchema: {type: object}, stateMachine: "` + c.arn + `"}]`
		set, err := mapping.Parse("arn.yaml", []byte(file))
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok=%v", c.arn, err, c.ok)
		}
		if err == nil && set.Tools[0].Target != stateMachine(t, c.arn) {
			t.Errorf("%s: target %+v", c.arn, set.Tools[0].Target)
		}
	}
}

func TestRefs(t *testing.T) {
	d := stepfunctions.Driver{}
	const arn = "arn:aws:states:us-east-1:123456789012:execution:orders:0b6f3c9e-7d1a-4f55-9a51-2c3f0c6f1e2d"
	if got := d.FormatRef(driver.Ref{ID: arn}); got != arn {
		t.Errorf("FormatRef = %q", got)
	}
	if got, err := d.ParseRef(arn); err != nil || got != (driver.Ref{ID: arn}) {
		t.Errorf("ParseRef(%q) = %v, %v", arn, got, err)
	}
	for _, bad := range []string{"", "orders", "taskgate/WaitAndEcho/" + uuid.NewString() + "/" + uuid.NewString(),
		"arn:aws:states:us-east-1:123456789012:stateMachine:orders",
		"arn:aws:states:us-east-1:123456789012:execution:orders",
		"arn:aws:states:us-east-1:123456789012:execution:orders:a/b",
		"arn:aws:states:us-east-1:123456789012:express:orders:x:y"} {
		if r, err := d.ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q) = %v, want an error", bad, r)
		}
	}
	const want = "stepfunctions: not an execution ARN: want arn:PARTITION:states:REGION:ACCOUNT:execution:STATE-MACHINE:NAME"
	if _, err := d.ParseRef("orders"); err == nil || err.Error() != want {
		t.Errorf("ParseRef error %v, want %s", err, want)
	}
}

// TestOpenWithAnExplicitEnvironment: the region and the credentials come from OpenOptions.Env
// when the engine block has none, not from the process's environment.
func TestOpenWithAnExplicitEnvironment(t *testing.T) {
	endpoint := testenv.SFNEndpoint(t)
	noFiles := []string{"AWS_CONFIG_FILE=" + filepath.Join(t.TempDir(), "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(t.TempDir(), "none")}
	for _, name := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"} {
		t.Setenv(name, "")
	}
	for _, kv := range noFiles {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	set, err := mapping.Parse("m.yaml", []byte(`engines: {a: {stepfunctions: {endpoint: "`+endpoint+`"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	block := set.Engines["a"].Config

	_, err = block.Open(t.Context(), driver.OpenOptions{Env: driver.Env(noFiles)})
	const want = "no AWS region for Step Functions: set region: in the engine block, or AWS_REGION, or a region in the AWS profile"
	if err == nil || err.Error() != want {
		t.Errorf("Open without a region: %v, want %s", err, want)
	}

	env := driver.Env(noFiles).With("AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=explicit", "AWS_SECRET_ACCESS_KEY=explicit")
	e, err := block.Open(t.Context(), driver.OpenOptions{Env: env})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	arns := createExamples(t, sfnClient(t, e), sfnexamples.WaitAndEcho)
	echo := stateMachine(t, arns[sfnexamples.WaitAndEcho])
	if !strings.Contains(echo.Name, ":us-east-1:") {
		t.Errorf("the state machine was created in %s, want region us-east-1", echo.Name)
	}
	_, out, err := runToEnd(t.Context(), e, echo, driver.StartRequest{Input: json.RawMessage(`{"seconds":0,"text":"env"}`)})
	if err != nil || string(out.Output) != `{"text":"env"}` {
		t.Errorf("Run with the explicit environment's credentials: %+v, %v", out, err)
	}
}

// An engine block's read budget: its own, unlimited, or the Step Functions default.
func TestBudget(t *testing.T) {
	for src, want := range map[string]driver.Budget{
		`{stepfunctions: {}}`:                                          stepfunctions.DefaultBudget,
		`{stepfunctions: {}, budget: {readsPerSecond: 2.5}}`:           {ReadsPerSecond: 2.5, Burst: 3},
		`{stepfunctions: {}, budget: {readsPerSecond: 10, burst: 40}}`: {ReadsPerSecond: 10, Burst: 40},
		`{stepfunctions: {}, budget: unlimited}`:                       {},
	} {
		set, err := mapping.Parse("b.yaml", []byte("engines: {a: "+src+"}"))
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if got := set.Engines["a"].Budget; got != want {
			t.Errorf("%s: budget %+v, want %+v", src, got, want)
		}
	}
	if b := stepfunctions.DefaultBudget; b.ReadsPerSecond < 6.66 || b.ReadsPerSecond > 6.67 || b.Burst != 166 {
		t.Errorf("default budget %+v, want two thirds of DescribeExecution's smallest quota (10/s, 250): 6.67/s, 166", b)
	}
	if b := (stepfunctions.Driver{}).Info().SweepBudget; b.ReadsPerSecond < 1.33 || b.ReadsPerSecond > 1.34 || b.Burst != 66 {
		t.Errorf("default sweep budget %+v, want two thirds of ListExecutions' smallest quota (2/s, 100): 1.33/s, 66", b)
	}
}
