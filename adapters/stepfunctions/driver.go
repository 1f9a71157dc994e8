package stepfunctions

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"regexp"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
)

func init() { adapters.Register("stepfunctions", Driver{}) }

// Driver is the "stepfunctions" engine kind of mapping files:
//
//	engines:
//	  aws:
//	    stepfunctions:
//	      region: eu-west-1
//	      roleArn: arn:aws:iam::210987654321:role/pipelines
//	      events: {topicArn: "arn:aws:sns:eu-west-1:210987654321:taskgate-sfn-events"}
//	tools:
//	  - name: analyze_dataset
//	    engine: aws
//	    stateMachine: arn:aws:states:eu-west-1:210987654321:stateMachine:analyze-dataset
//	  - name: import_orders
//	    engine: aws
//	    stateMachine: {arn: "arn:aws:states:eu-west-1:210987654321:stateMachine:import", history: false}
//
// Every key of the engine block is optional: the region comes from the standard AWS chain when
// the block has none. events names the SNS topic that Step Functions' status change events reach
// (Events): replicas then learn of ends within a second or two. Its native task ids are execution
// ARNs.
type Driver struct{}

//go:embed schema.json
var schema []byte

const stateMachineHint = "like arn:aws:states:us-east-1:123456789012:stateMachine:NAME, or with :ALIAS or :VERSION after it"

var (
	regionRE  = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	roleARNRE = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$`)
)

// Info describes the engine block and the stateMachine key.
func (Driver) Info() driver.DriverInfo {
	return driver.DriverInfo{
		Title:         "Step Functions",
		TargetKey:     "stateMachine",
		Schema:        schema,
		EngineExample: "stepfunctions: {region: us-east-1}",
		TargetExample: "stateMachine: arn:aws:states:REGION:ACCOUNT:stateMachine:NAME",
		Budget:        DefaultBudget,
		SweepBudget:   DefaultSweepBudget,
	}
}

// DefaultBudget is two thirds of DescribeExecution's default quota in the regions where it is
// smallest (a bucket of 250, refilled at 10 per second; 300 and 15 in the largest regions): the
// quota is per account and region, shared with every other caller there (consoles, dashboards,
// the pipelines' own orchestration), which keep the last third.
var DefaultBudget = driver.Budget{ReadsPerSecond: 10 * 2.0 / 3, Burst: 250 * 2 / 3}

// DefaultSweepBudget is, in the same way, two thirds of ListExecutions' own default quota where it
// is smallest (a bucket of 100, refilled at 2 per second; 200 and 5 in the largest regions): what
// sweeps (and samples) of running executions spend.
var DefaultSweepBudget = driver.Budget{ReadsPerSecond: 2 * 2.0 / 3, Burst: 100 * 2 / 3}

// DecodeEngine reads region, endpoint, roleArn and events, all optional.
func (Driver) DecodeEngine(b driver.Block) driver.EngineConfig {
	var c Config
	if region, ok := b.String("region"); ok && region != "" {
		if regionRE.MatchString(region) {
			c.Region = region
		} else {
			b.Errorf("region", "the AWS region of the state machines, like us-east-1; or leave it out for AWS_REGION", "%q is not an AWS region", region)
		}
	}
	if endpoint, ok := b.String("endpoint"); ok && endpoint != "" {
		if u, err := url.Parse(endpoint); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			c.Endpoint = endpoint
		} else {
			b.Errorf("endpoint", "like http://127.0.0.1:8083; leave it out to use AWS", "%q is not an http:// or https:// URL", endpoint)
		}
	}
	if role, ok := b.String("roleArn"); ok && role != "" {
		if roleARNRE.MatchString(role) {
			c.RoleARN = role
		} else {
			b.Errorf("roleArn", "like arn:aws:iam::123456789012:role/NAME", "%q is not an IAM role ARN", role)
		}
	}
	if eb, ok := b.Block("events", eventsHint); ok {
		c.Events = decodeEvents(eb, c.Region)
	}
	return c
}

const eventsHint = "write events: {topicArn: arn:aws:sns:REGION:ACCOUNT:NAME}, the SNS topic the EventBridge rule publishes status changes to"

// decodeEvents reads events: {topicArn, queuePrefix, endpoint}. region is the block's own, when it
// has one: the topic must be in it.
func decodeEvents(b driver.Block, region string) Events {
	var ev Events
	if arn, ok := b.Required("topicArn", "the SNS topic the EventBridge rule of Step Functions' status changes publishes to, like arn:aws:sns:us-east-1:123456789012:taskgate-sfn-events"); ok {
		switch t, valid := parseTopicARN(arn); {
		case !valid:
			b.Errorf("topicArn", "like arn:aws:sns:us-east-1:123456789012:taskgate-sfn-events", "%q is not an SNS topic ARN", arn)
		case region != "" && t.region != region:
			b.Errorf("topicArn", "Step Functions sends its events to the EventBridge of its own region, whose rules publish to topics of that region",
				"the topic is in region %s, not in the engine's region %s", t.region, region)
		default:
			ev.TopicARN = arn
		}
	}
	if prefix, ok := b.String("queuePrefix"); ok && prefix != "" {
		if validQueuePrefix(prefix) {
			ev.QueuePrefix = prefix
		} else {
			b.Errorf("queuePrefix", fmt.Sprintf("at most %d letters, digits, - and _: a random suffix of %d follows, and SQS names have 80 at most; or leave it out for %s",
				maxQueuePrefix, queueSuffix, DefaultQueuePrefix), "%q cannot start an SQS queue name", prefix)
		}
	}
	if endpoint, ok := b.String("endpoint"); ok && endpoint != "" {
		if u, err := url.Parse(endpoint); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			ev.Endpoint = endpoint
		} else {
			b.Errorf("endpoint", "the SNS and SQS endpoint, like http://127.0.0.1:5000; leave it out for the block's endpoint, or AWS's", "%q is not an http:// or https:// URL", endpoint)
		}
	}
	return ev
}

// Open configures a client for the engine block; it makes no API call.
func (c Config) Open(ctx context.Context, opts driver.OpenOptions) (driver.Conn, error) {
	c.Env, c.Retried = opts.Env, opts.Retried
	return New(ctx, c)
}

// DecodeTarget reads stateMachine: a state machine ARN, or an alias or version ARN; or, written
// long, {arn: ARN, history: BOOL}, where history overrides what Check finds from the definition.
func (Driver) DecodeTarget(tool driver.Block) driver.Target {
	key, in := "stateMachine", tool
	h := historyAuto
	if tool.IsBlock(key) {
		b, ok := tool.Block(key, "")
		if !ok {
			return driver.Target{}
		}
		key, in = "arn", b
		if read, set := b.Bool("history"); set {
			h = map[bool]readHistory{true: historyRead, false: historySkip}[read]
		}
	}
	arn, ok := in.Required(key, stateMachineHint)
	if !ok {
		return driver.Target{}
	}
	t, err := stateMachine(arn, h)
	if err != nil {
		in.Errorf(key, stateMachineHint, "%q is not a state machine ARN", arn)
	}
	return t
}

// StateMachine returns the target that starts executions of the state machine arn (an alias or
// version ARN pins a version): what DecodeTarget reads from stateMachine: ARN. Its Name is the ARN.
func StateMachine(arn string) (driver.Target, error) { return stateMachine(arn, historyAuto) }

func stateMachine(arn string, h readHistory) (driver.Target, error) {
	m, err := parseMachineARN(arn)
	if err != nil {
		return driver.Target{}, err
	}
	return driver.Target{Name: arn, Spec: spec{machineARN: m, history: h}}, nil
}

// spec is a target's Spec: its state machine, and whether a poll of a running execution reads
// its history, as the mapping says.
type spec struct {
	machineARN
	history readHistory
}

// machineOf reads a target's Spec, which must be a state machine's.
func machineOf(t driver.Target) (machineARN, error) {
	s, ok := t.Spec.(spec)
	if !ok {
		return machineARN{}, fmt.Errorf("%w: target %q is not a Step Functions state machine: map it as stateMachine: ARN", driver.ErrInvalid, t.Name)
	}
	return s.machineARN, nil
}

// FormatRef writes r as the execution ARN.
func (Driver) FormatRef(r driver.Ref) string { return r.ID }

// ParseRef accepts the ARN of a Standard execution.
func (Driver) ParseRef(id string) (driver.Ref, error) {
	if _, _, ok := parseExecutionARN(id); !ok {
		return driver.Ref{}, errors.New("stepfunctions: not an execution ARN: want arn:PARTITION:states:REGION:ACCOUNT:execution:STATE-MACHINE:NAME")
	}
	return driver.Ref{ID: id}, nil
}
