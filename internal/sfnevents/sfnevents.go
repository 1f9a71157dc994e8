// Package sfnevents provisions, in a Step Functions endpoint of tests and benchmarks (the local
// one, scripts/sfn-local, whose EventBridge, SNS and SQS are moto's), what
// terraform/modules/taskgate-stepfunctions-events provisions on AWS for an engine block's events:
// an SNS topic that only EventBridge's rule may publish to, and an EventBridge rule on the default
// bus that sends it Step Functions' status change events, of every state machine or of the ones
// named. The engine block then names the topic (events: {topicArn: ...}).
package sfnevents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
)

// Options say where and what to provision.
type Options struct {
	// Endpoint is the URL of the endpoint that serves EventBridge and SNS (the local Step Functions
	// endpoint, SFN_ENDPOINT). Empty: AWS's own.
	Endpoint string
	// Region is the region of the state machines. Empty: AWS_REGION, else us-east-1.
	Region string
	// Name names the topic and the rule. Empty: "taskgate-sfn-events-" and a random suffix.
	Name string
	// StateMachineARNs, when set, restricts the rule to the executions of these state machines
	// (their ARNs without version or alias); empty: every state machine's.
	StateMachineARNs []string
	// HTTPClient replaces the SDK's HTTP client; nil: the SDK's.
	HTTPClient aws.HTTPClient
}

// Source is what Provision made.
type Source struct {
	// TopicARN is the topic, for the engine block's events.topicArn.
	TopicARN string
	// RuleName and RuleARN are the rule on the default bus.
	RuleName, RuleARN string

	events *eventbridge.Client
	sns    *sns.Client
}

// DetailType and EventSource are what the rule matches: Step Functions' status change events.
const (
	DetailType  = "Step Functions Execution Status Change"
	EventSource = "aws.states"
)

// targetID is the id of the topic among the rule's targets.
const targetID = "taskgate-sfn-events"

// Provision makes the topic and the rule, with the credentials of the standard AWS chain.
func Provision(ctx context.Context, o Options) (*Source, error) {
	if o.Region == "" {
		o.Region = os.Getenv("AWS_REGION")
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.Name == "" {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		o.Name = "taskgate-sfn-events-" + hex.EncodeToString(b)
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(o.Region)}
	if o.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(o.HTTPClient))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("sfnevents: loading the AWS configuration: %w", err)
	}
	s := &Source{
		RuleName: o.Name,
		events: eventbridge.NewFromConfig(cfg, func(c *eventbridge.Options) {
			if o.Endpoint != "" {
				c.BaseEndpoint = aws.String(o.Endpoint)
			}
		}),
		sns: sns.NewFromConfig(cfg, func(c *sns.Options) {
			if o.Endpoint != "" {
				c.BaseEndpoint = aws.String(o.Endpoint)
			}
		}),
	}
	topic, err := s.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(o.Name)})
	if err != nil {
		return nil, fmt.Errorf("sfnevents: creating the topic %s: %w", o.Name, err)
	}
	s.TopicARN = aws.ToString(topic.TopicArn)
	pattern := map[string]any{"source": []string{EventSource}, "detail-type": []string{DetailType}}
	if len(o.StateMachineARNs) > 0 {
		pattern["detail"] = map[string]any{"stateMachineArn": o.StateMachineARNs}
	}
	p, _ := json.Marshal(pattern)
	rule, err := s.events.PutRule(ctx, &eventbridge.PutRuleInput{
		Name: aws.String(o.Name), EventPattern: aws.String(string(p)),
		Description: aws.String("Step Functions' status changes to taskgate's replicas"),
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("sfnevents: creating the rule %s: %w", o.Name, err), s.Remove(ctx))
	}
	s.RuleARN = aws.ToString(rule.RuleArn)
	if _, err := s.sns.SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{
		TopicArn: aws.String(s.TopicARN), AttributeName: aws.String("Policy"), AttributeValue: aws.String(TopicPolicy(s.TopicARN, s.RuleARN)),
	}); err != nil {
		return nil, errors.Join(fmt.Errorf("sfnevents: letting the rule publish to the topic: %w", err), s.Remove(ctx))
	}
	if _, err := s.events.PutTargets(ctx, &eventbridge.PutTargetsInput{
		Rule: aws.String(o.Name), Targets: []ebtypes.Target{{Id: aws.String(targetID), Arn: aws.String(s.TopicARN)}},
	}); err != nil {
		return nil, errors.Join(fmt.Errorf("sfnevents: making the topic the rule's target: %w", err), s.Remove(ctx))
	}
	return s, nil
}

// TopicPolicy is the topic's policy: only EventBridge, for the rule, may publish to it.
func TopicPolicy(topicARN, ruleARN string) string {
	p, _ := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Sid": "RulePublishes", "Effect": "Allow",
			"Principal": map[string]string{"Service": "events.amazonaws.com"},
			"Action":    "sns:Publish", "Resource": topicARN,
			"Condition": map[string]any{"ArnEquals": map[string]string{"aws:SourceArn": ruleARN}},
		}},
	})
	return string(p)
}

// Remove deletes the rule and the topic (and with the topic, its subscriptions).
func (s *Source) Remove(ctx context.Context) error {
	var errs []error
	if s.RuleARN != "" {
		if _, err := s.events.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(s.RuleName), Ids: []string{targetID}}); err != nil {
			errs = append(errs, err)
		}
		if _, err := s.events.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(s.RuleName)}); err != nil {
			errs = append(errs, err)
		}
	}
	if s.TopicARN != "" {
		if _, err := s.sns.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: aws.String(s.TopicARN)}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sfnevents: removing %s: %w", s.RuleName, err)
	}
	return nil
}
