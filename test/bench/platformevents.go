package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/taskgate/taskgate/internal/sfnevents"
)

// The Step Functions event source of the fleet-platform figure: the local endpoint emits each
// execution's status changes as AWS does (EventBridge events, "Step Functions Execution Status
// Change"), a rule sends them to an SNS topic, and the SFN engine block reads them with
// `events: {topicArn: ..., endpoint: ...}`.
//
// The switch: provisionSFNEvents provisions the topic and the rule in the local endpoint (moto)
// with internal/sfnevents (what terraform's module provisions on AWS) and returns the topic's ARN;
// -fleet-platform-events-topic names a topic provisioned otherwise. With -fleet-platform-events
// auto (the default) or on, the SFN block of the main and throttled runs has the event source, and
// a run of Step Functions alone without it gives the "sfn (no events)" rows; with
// -fleet-platform-events off (or provisionSFNEvents nil and no topic named), the SFN block has
// none, and the main run's Step Functions figures are the "sfn (no events)" rows too.

// provisionSFNEvents provisions the event source in the Step Functions endpoint at endpoint (the
// engine's own URL, not the counting proxy's) and returns the SNS topic's ARN and what removes
// what it made. nil: none is provisioned.
var provisionSFNEvents = func(ctx context.Context, endpoint string) (topicARN string, remove func(context.Context) error, err error) {
	s, err := sfnevents.Provision(ctx, sfnevents.Options{Endpoint: endpoint})
	if err != nil {
		return "", nil, err
	}
	return s.TopicARN, s.Remove, nil
}

// sfnEventSource is the topic ARN of the figure's event source ("": none), by the flags, and what
// removes it when the figure is done (nil: nothing to remove).
func (b *bench) sfnEventSource(ctx context.Context, endpoint string) (string, func(context.Context) error, error) {
	mode, topic := b.opts.platform.events, b.opts.platform.eventsTopic
	switch {
	case mode == "off":
		return "", nil, nil
	case topic != "":
		return topic, nil, nil
	case provisionSFNEvents != nil:
		arn, remove, err := provisionSFNEvents(ctx, endpoint)
		if err != nil {
			return "", nil, fmt.Errorf("provisioning the Step Functions event source: %w", err)
		}
		return arn, remove, nil
	case mode == "on":
		return "", nil, fmt.Errorf("-fleet-platform-events on: this build provisions no Step Functions event source (provisionSFNEvents), and -fleet-platform-events-topic names none")
	}
	return "", nil, nil
}

// sfnEventsYAML is the event source's key in the stepfunctions part of the SFN engine block.
func sfnEventsYAML(topicARN, endpoint string) string {
	return "events: {topicArn: " + strconv.Quote(topicARN) + ", endpoint: " + strconv.Quote(endpoint) + "}"
}
